import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MemoryContext, memoryContext } from '../../test/support/memoryContext.js';
import type { Caller } from '../context/caller.js';
import { createOperation } from '../entities/create.js';
import { ApiError } from '../errors/apiError.js';
import type { Action } from '../model/types.js';
import { findVisible, findWritable, scopeFor } from './requireAccess.js';

let m: MemoryContext;
let admin: Caller;
let user: Caller;
let anonymous: Caller;
beforeAll(async () => {
  m = await memoryContext();
  admin = await m.userCaller(['ADMIN']);
  user = await m.userCaller(['USER']);
  anonymous = await m.anonymous();
});
afterAll(() => m.close());

const entity = (plural: string) => m.ctx.registry.entities.get(plural)!.model;
const scope = (caller: Caller, plural: string, action: Action) => scopeFor(m.ctx, caller, entity(plural), action);
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return (error as ApiError).code;
};

describe('the access scope', () => {
  it('lets an admin touch everything, with no constraint', async () => {
    for (const action of ['view', 'create', 'edit', 'delete'] as const)
      expect(await scope(admin, 'articles', action)).toBeUndefined();
  });

  it('turns a field-value permission into a condition (ANONYMOUS: view:status:published)', async () => {
    expect(await scope(anonymous, 'articles', 'view')).toEqual({ field: 'status', op: 'eq', value: 'published' });
    expect(await scope(anonymous, 'comments', 'view')).toEqual({ field: 'approved', op: 'eq', value: true });
  });

  it('joins ownership and field-value scopes with OR for a USER', async () => {
    const own = { field: 'ownerId', op: 'eq', value: user.user!.id };
    expect(await scope(user, 'articles', 'view')).toEqual({
      or: [own, { field: 'status', op: 'eq', value: 'published' }],
    });
    expect(await scope(user, 'comments', 'edit')).toEqual(own);
    expect(await scope(user, 'comments', 'delete')).toEqual(own);
  });

  it('answers 401 to an anonymous caller and 403 to a signed-in one without the permission', async () => {
    expect(await refusal(scope(anonymous, 'articles', 'edit'))).toBe('UNAUTHORIZED');
    expect(await refusal(scope(anonymous, 'projects', 'view'))).toBe('UNAUTHORIZED');
    expect(await refusal(scope(user, 'articles', 'delete'))).toBe('FORBIDDEN');
  });

  it('narrows a tenant-scoped entity to the tenants the caller belongs to', async () => {
    const member = await m.userCaller(['USER']);
    const org = await createOperation({
      ctx: m.ctx,
      plural: 'organizations',
      body: { name: 'Acme', members: [member.user!.id] },
      caller: admin,
    });
    const own = { field: 'ownerId', op: 'eq', value: member.user!.id };
    expect(await scope(member, 'projects', 'view')).toEqual({
      and: [own, { field: 'tenantId', op: 'in', value: [org.id] }],
    });
    // Outsiders see no tenant at all, and cannot pick one with x-tenant-id.
    expect(await scope(user, 'projects', 'view')).toEqual({
      and: [
        { field: 'ownerId', op: 'eq', value: user.user!.id },
        { field: 'tenantId', op: 'in', value: [] },
      ],
    });
    expect(await refusal(scope({ ...user, requestedTenantId: org.id as string }, 'projects', 'view'))).toBe(
      'FORBIDDEN',
    );
  });
});

describe('finding a record through the scope', () => {
  it('hides what the caller may not view as 404, and refuses a visible record outside the edit scope with 403', async () => {
    const draft = await createOperation({
      ctx: m.ctx,
      plural: 'articles',
      body: { title: 'Draft', body: 'b' },
      caller: admin,
    });
    const published = await createOperation({
      ctx: m.ctx,
      plural: 'articles',
      body: { title: 'Out', body: 'b', status: 'published' },
      caller: admin,
    });
    expect(await refusal(findVisible(m.ctx, entity('articles'), draft.id as string, anonymous))).toBe('NOT_FOUND');
    expect(await refusal(findVisible(m.ctx, entity('articles'), 'not-an-id', admin))).toBe('NOT_FOUND');
    expect((await findVisible(m.ctx, entity('articles'), published.id as string, anonymous)).title).toBe('Out');
    expect(await refusal(findWritable(m.ctx, entity('articles'), published.id as string, user, 'edit'))).toBe(
      'FORBIDDEN',
    );
    const mine = await createOperation({
      ctx: m.ctx,
      plural: 'articles',
      body: { title: 'Mine', body: 'b' },
      caller: user,
    });
    const found = await findWritable(m.ctx, entity('articles'), mine.id as string, user, 'edit');
    expect(found.doc.id).toBe(mine.id);
    expect(found.where).toEqual({ field: 'ownerId', op: 'eq', value: user.user!.id });
  });
});
