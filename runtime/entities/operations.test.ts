import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MemoryContext, memoryContext } from '../../test/support/memoryContext.js';
import type { Caller } from '../context/caller.js';
import { ApiError } from '../errors/apiError.js';
import { ENTITY_VERSIONS } from '../model/collections.js';
import { createOperation } from './create.js';
import { updateOperation } from './update.js';

let m: MemoryContext;
let admin: Caller;
let user: Caller;
beforeAll(async () => {
  m = await memoryContext('2026-01-01T00:00:00.000Z');
  admin = await m.userCaller(['ADMIN']);
  user = await m.userCaller(['USER'], 'ada@example.com');
});
afterAll(() => m.close());

const create = (plural: string, body: unknown, caller = admin) => createOperation({ ctx: m.ctx, plural, body, caller });
const update = (plural: string, id: unknown, body: unknown, caller = admin) =>
  updateOperation({ ctx: m.ctx, plural, id: String(id), body, caller });
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return (error as ApiError).toBody().error;
};

describe('create', () => {
  it('fills defaults, owner and timestamps from the clock, and starts content as a draft', async () => {
    const article = await create('articles', { title: 'Hello', body: 'World' });
    expect(article).toMatchObject({
      ownerId: admin.user!.id,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      status: 'draft',
      publishedAt: null,
      views: 0,
      kind: 'news',
      featured: false,
      related: [],
      tags: [],
      archivedAt: null,
    });
    expect(article.id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('resolves macros from the caller ({{user.name}})', async () => {
    const article = await create('articles', { title: 'A', body: 'b', status: 'published' });
    const comment = await create('comments', { article: article.id, body: 'nice' }, user);
    expect(comment).toMatchObject({ author: 'ada', ownerId: user.user!.id, approved: false });
  });

  it('writes version 1 of a versioned entity in the same write', async () => {
    const article = await create('articles', { title: 'Versioned', body: 'b' });
    const versions = await m.ctx.store.find(ENTITY_VERSIONS, {
      where: { field: 'entityId', op: 'eq', value: article.id },
    });
    expect(versions.map((v) => v.version)).toEqual([1]);
  });

  it('reports every invalid field at once and stores nothing', async () => {
    const before = await m.ctx.store.count('articles', {});
    const error = await refusal(create('articles', { title: 7, nope: true, kind: 'gossip' }));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(error.details!).sort()).toEqual(['body', 'kind', 'nope', 'title']);
    expect(await m.ctx.store.count('articles', {})).toBe(before);
  });

  it('refuses a caller without the create permission', async () => {
    expect((await refusal(create('projects', { name: 'P', code: 'P1' }, await m.anonymous()))).code).toBe(
      'UNAUTHORIZED',
    );
  });
});

describe('update', () => {
  it('changes only what is sent, moves updatedAt, and stamps publishedAt on publishing', async () => {
    const article = await create('articles', { title: 'Draft', body: 'b', views: 3 });
    m.setNow('2026-01-02T10:00:00.000Z');
    const after = await update('articles', article.id, { status: 'published' });
    expect(after).toMatchObject({
      title: 'Draft',
      views: 3,
      status: 'published',
      publishedAt: '2026-01-02T10:00:00.000Z',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-02T10:00:00.000Z',
    });
    const versions = await m.ctx.store.find(ENTITY_VERSIONS, {
      where: { field: 'entityId', op: 'eq', value: article.id },
    });
    expect(versions.map((v) => v.version).sort()).toEqual([1, 2]);
    m.setNow('2026-01-01T00:00:00.000Z');
  });

  it('refuses server-set fields and unknown fields in the body', async () => {
    const article = await create('articles', { title: 'T', body: 'b' });
    const error = await refusal(
      update('articles', article.id, { ownerId: user.user!.id, createdAt: '2020-01-01T00:00:00Z', nope: 1 }),
    );
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toEqual({ ownerId: 'is not allowed', createdAt: 'is not allowed', nope: 'is not allowed' });
    expect((await m.ctx.store.get('articles', article.id))!.ownerId).toBe(admin.user!.id);
  });

  it('lets an owner edit their record, and hides another owner’s record as 404', async () => {
    const article = await create('articles', { title: 'A', body: 'b', status: 'published' });
    const comment = await create('comments', { article: article.id, body: 'first' }, user);
    expect((await update('comments', comment.id, { body: 'edited' }, user)).body).toBe('edited');
    const stranger = await m.userCaller(['USER']);
    expect((await refusal(update('comments', comment.id, { body: 'mine now' }, stranger))).code).toBe('NOT_FOUND');
    expect((await m.ctx.store.get('comments', comment.id))!.body).toBe('edited');
  });
});
