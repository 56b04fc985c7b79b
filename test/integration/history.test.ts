import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperation } from '../../runtime/entities/create.js';
import { updateOperation } from '../../runtime/entities/update.js';
import type { Store } from '../../runtime/store/types.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
let owner: { id: string; token: string };
let admin: { id: string; token: string };

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.user({ displayName: 'Owner' });
  admin = await server.user({ roles: ['ADMIN'] });
});
afterAll(() => server.close());

const create = async (body: object, token = owner.token) =>
  (await server.call('POST', '/api/v1/articles', { token, body })).body.data;
const versions = (id: string, query = '', token = owner.token) =>
  server.call('GET', `/api/v1/articles/${id}/versions${query}`, { token });

describe('full versioning', () => {
  it('answers 409 naming the field when a revert brings back a unique value another record took', async () => {
    const a = await create({ title: 'unique', body: 'b', sku: 'SKU-REVERT-1' });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, { token: owner.token, body: { sku: 'SKU-REVERT-2' } });
    await create({ title: 'taker', body: 'b', sku: 'SKU-REVERT-1' });
    const refused = await server.call('POST', `/api/v1/articles/${a.id}/revert/1`, { token: owner.token, body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { sku: 'must be unique' } });
    const kept = await server.call('GET', `/api/v1/articles/${a.id}`, { token: owner.token });
    expect(kept.body.data.sku).toBe('SKU-REVERT-2');
  });

  it('reverts only along the content status moves PATCH allows', async () => {
    const a = await create({ title: 'status', body: 'b' });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, { token: owner.token, body: { status: 'published' } });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, { token: owner.token, body: { status: 'archived' } });
    // Version 2 is published; archived -> published is not a legal move.
    const refused = await server.call('POST', `/api/v1/articles/${a.id}/revert/2`, { token: owner.token, body: {} });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual({ status: 'cannot move from archived to published' });
    expect((await server.call('GET', `/api/v1/articles/${a.id}`, { token: owner.token })).body.data.status).toBe(
      'archived',
    );
    // archived -> draft is legal.
    const back = await server.call('POST', `/api/v1/articles/${a.id}/revert/1`, { token: owner.token, body: {} });
    expect(back.status).toBe(200);
    expect(back.body.entity.status).toBe('draft');
  });

  it('never moves a record into the archive by a revert, nor sets a server field', async () => {
    const a = await create({ title: 'kept out', body: 'b' });
    await server.call('POST', `/api/v1/articles/${a.id}/archive`, { token: owner.token });
    await server.call('POST', `/api/v1/articles/${a.id}/restore`, { token: owner.token });
    // Version 2 was taken as the article went into the archive.
    const reverted = await server.call('POST', `/api/v1/articles/${a.id}/revert/2`, { token: owner.token, body: {} });
    expect(reverted.status).toBe(200);
    expect(reverted.body.entity.archivedAt ?? null).toBeNull();
    const read = await server.call('GET', `/api/v1/articles/${a.id}`, { token: owner.token });
    expect(read.body.data.archivedAt ?? null).toBeNull();
    expect(read.body.data.updatedAt).not.toBe(a.updatedAt);
    expect(read.body.data.createdAt).toBe(a.createdAt);
  });

  it('never moves a record into the trash by a revert: an editor without delete cannot trash through history', async () => {
    const role = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'NOTE_EDITOR', label: 'Note editor', permissions: ['notes:view', 'notes:edit'] },
    });
    expect(role.status).toBe(201);
    const editor = await server.user({ roles: ['NOTE_EDITOR'] });
    const note = (await server.call('POST', '/api/v1/notes', { token: admin.token, body: { title: 'precious' } })).body
      .data;
    expect((await server.call('DELETE', `/api/v1/notes/${note.id}`, { token: admin.token })).status).toBe(200);
    const back = await server.call('POST', `/api/v1/notes/${note.id}/restore-from-trash`, { token: admin.token });
    expect(back.status).toBe(200);
    const history = await server.call('GET', `/api/v1/notes/${note.id}/versions`, { token: admin.token });
    const trashed = history.body.items.find((v: { snapshot: { trashedAt?: string } }) => v.snapshot.trashedAt);
    expect(trashed).toBeDefined();
    // The editor may not delete, so may not trash through a revert either.
    expect((await server.call('DELETE', `/api/v1/notes/${note.id}`, { token: editor.token })).status).toBe(403);
    const reverted = await server.call('POST', `/api/v1/notes/${note.id}/revert/${trashed.version}`, {
      token: editor.token,
      body: {},
    });
    expect(reverted.status).toBe(200);
    expect(reverted.body.entity.trashedAt ?? null).toBeNull();
    expect((await server.call('GET', `/api/v1/notes/${note.id}`, { token: editor.token })).status).toBe(200);
    const inTrash = await server.call('GET', '/api/v1/notes?trash=only', { token: admin.token });
    expect(inTrash.body.data.items.map((n: { id: string }) => n.id)).not.toContain(note.id);
  });

  it('writes a version for every write path, newest first, with changedBy and changeType', async () => {
    const a = await create({ title: 'v1', body: 'b', price: 1 });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, {
      token: owner.token,
      headers: { 'x-change-reason': 'fix title' },
      body: { title: 'v2' },
    });
    await server.call('PATCH', `/api/v1/articles/${a.id}/increment?changeReason=bump`, {
      token: owner.token,
      body: { views: 2 },
    });
    await server.call('POST', `/api/v1/articles/${a.id}/archive`, { token: owner.token });
    await server.call('POST', `/api/v1/articles/${a.id}/restore`, { token: owner.token });
    const list = await versions(a.id);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(5);
    expect(list.body.hasMore).toBe(false);
    expect(list.body.items.map((v: { version: number; changeType: string }) => [v.version, v.changeType])).toEqual([
      [5, 'restore'],
      [4, 'archive'],
      [3, 'update'],
      [2, 'update'],
      [1, 'create'],
    ]);
    const v2 = list.body.items[3];
    expect(v2).toMatchObject({
      entityId: a.id,
      changedBy: owner.id,
      changeReason: 'fix title',
      changedFields: ['title'],
    });
    expect(v2.snapshot.title).toBe('v2');
    expect(list.body.items[2]).toMatchObject({ changeReason: 'bump', changedFields: ['views'] });
    expect(Object.keys(v2).sort()).toEqual([
      'changeReason',
      'changeType',
      'changedBy',
      'changedFields',
      'createdAt',
      'entityId',
      'id',
      'snapshot',
      'updatedAt',
      'version',
    ]);
  });

  it('pages with limit and cursor', async () => {
    const a = await create({ title: 't0', body: 'b' });
    for (let i = 1; i <= 4; i++)
      await server.call('PATCH', `/api/v1/articles/${a.id}`, { token: owner.token, body: { title: `t${i}` } });
    const first = await versions(a.id, '?limit=2');
    expect(first.body.items.map((v: { version: number }) => v.version)).toEqual([5, 4]);
    expect(first.body).toMatchObject({ total: 5, hasMore: true });
    const second = await versions(a.id, `?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2]);
    expect((await versions(a.id, '?limit=0')).status).toBe(400);
    expect((await versions(a.id, '?cursor=forged')).status).toBe(400);
  });

  it('gets one version, compares two (equal ones too) and reverts, keeping later versions', async () => {
    const a = await create({ title: 'first', body: 'b', price: 10 });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, {
      token: owner.token,
      body: { title: 'second', price: 20 },
    });
    const one = await server.call('GET', `/api/v1/articles/${a.id}/versions/1`, { token: owner.token });
    expect(one.body).toMatchObject({ version: 1, snapshot: { title: 'first', price: 10 } });
    expect((await server.call('GET', `/api/v1/articles/${a.id}/versions/9`, { token: owner.token })).status).toBe(404);

    const compare = await server.call('GET', `/api/v1/articles/${a.id}/versions/compare?a=1&b=2`, {
      token: owner.token,
    });
    expect(compare.body).toMatchObject({
      entityId: a.id,
      versionA: { version: 1, changedBy: owner.id },
      versionB: { version: 2 },
    });
    const changed = compare.body.changes
      .filter((c: { changed: boolean }) => c.changed)
      .map((c: { field: string }) => c.field);
    expect(changed.sort()).toEqual(['price', 'title', 'updatedAt']);
    expect(compare.body.totalChanges).toBe(3);
    expect(compare.body.changes.find((c: { field: string }) => c.field === 'title')).toEqual({
      field: 'title',
      oldValue: 'first',
      newValue: 'second',
      changed: true,
    });
    const same = await server.call('GET', `/api/v1/articles/${a.id}/versions/compare?a=2&b=2`, { token: owner.token });
    expect(same.body.totalChanges).toBe(0);
    expect(
      (await server.call('GET', `/api/v1/articles/${a.id}/versions/compare?a=1`, { token: owner.token })).status,
    ).toBe(400);
    // The history routes take their declared parameters and no others.
    for (const [query, key, message] of [
      ['/compare?a=1&b=2&c=3', 'c', 'is not a known query parameter (a, b)'],
      ['/compare?a=0&b=2', 'a', 'must be at least 1'],
      ['?limit=201', 'limit', 'must be at most 200'],
      ['?limit=2&sort=x', 'sort', 'is not a known query parameter (limit, cursor)'],
    ]) {
      const refused = await server.call('GET', `/api/v1/articles/${a.id}/versions${query}`, { token: owner.token });
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.details, query).toEqual({ [key]: message });
    }

    const revert = await server.call('POST', `/api/v1/articles/${a.id}/revert/1`, {
      token: owner.token,
      body: { changeReason: 'undo' },
    });
    expect(revert.status).toBe(200);
    expect(revert.body).toMatchObject({
      success: true,
      revertedTo: 1,
      newVersion: 3,
      entity: { title: 'first', price: 10 },
    });
    const v3 = await server.call('GET', `/api/v1/articles/${a.id}/versions/3`, { token: owner.token });
    const { updatedAt: _a, ...snap3 } = v3.body.snapshot;
    const { updatedAt: _b, ...snap1 } = one.body.snapshot;
    expect(snap3).toEqual(snap1);
    expect(v3.body.changeReason).toBe('undo');
    // Revert of a revert: back to the second state, as version 4.
    const again = await server.call('POST', `/api/v1/articles/${a.id}/revert/2`, { token: owner.token });
    expect(again.body).toMatchObject({ revertedTo: 2, newVersion: 4, entity: { title: 'second', price: 20 } });
    expect((await versions(a.id)).body.total).toBe(4);
  });

  it('writes a delete version first; the history stays readable to whoever could view the record', async () => {
    const a = await create({ title: 'doomed', body: 'b' });
    await server.call('DELETE', `/api/v1/articles/${a.id}`, { token: admin.token });
    const list = await versions(a.id);
    expect(list.status).toBe(200);
    expect(list.body.items[0]).toMatchObject({
      version: 2,
      changeType: 'delete',
      changedBy: admin.id,
      snapshot: { title: 'doomed' },
    });
    const stranger = await server.user();
    expect((await versions(a.id, '', stranger.token)).status).toBe(404);
  });

  it('records bulk creates, and refuses history to callers who may not view the record', async () => {
    const bulk = await server.call('POST', '/api/v1/articles/bulk', {
      token: owner.token,
      body: {
        items: [
          { title: 'b1', body: 'x' },
          { title: 'b2', body: 'x' },
        ],
      },
    });
    for (const item of bulk.body.data.items)
      expect((await versions(item.id)).body.items[0]).toMatchObject({ version: 1, changeType: 'create' });
    const stranger = await server.user();
    expect((await versions(bulk.body.data.items[0].id, '', stranger.token)).status).toBe(404);
    // ANONYMOUS may view published articles, so an unpublished one is hidden (404)...
    expect((await versions(bulk.body.data.items[0].id, '', '')).status).toBe(404);
    // ...while on projects ANONYMOUS has no permission at all (401).
    expect((await server.call('GET', `/api/v1/projects/${bulk.body.data.items[0].id}/audit`)).status).toBe(401);
  });

  it('commits the entity write and its history together, or neither', async () => {
    const failing = (store: Store): Store =>
      new Proxy(store, {
        get(target, key) {
          if (key === 'transaction')
            return (fn: (tx: Store) => Promise<unknown>) => target.transaction((tx) => fn(failing(tx)));
          if (key === 'insert') {
            return async (collection: string, doc: never) => {
              if (collection === 'entityVersions') throw new Error('injected failure in the history write');
              return target.insert(collection, doc);
            };
          }
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    const ctx = { ...server.ctx, store: failing(server.ctx.store) };
    const caller = {
      user: { id: owner.id, email: 'o@example.test', displayName: 'Owner' },
      roles: ['USER'],
      permissions: new Set(['articles:create', 'articles:view:own', 'articles:edit:own']),
      isAdmin: false,
    };
    await expect(
      createOperation({ ctx, plural: 'articles', body: { title: 'ghost', body: 'b' }, caller }),
    ).rejects.toThrow(/injected failure/);
    expect((await server.call('GET', '/api/v1/articles?q=ghost', { token: owner.token })).body.data.totalCount).toBe(0);

    const a = await create({ title: 'kept', body: 'b' });
    await expect(
      updateOperation({ ctx, plural: 'articles', id: a.id, body: { title: 'lost' }, caller }),
    ).rejects.toThrow(/injected failure/);
    expect((await server.call('GET', `/api/v1/articles/${a.id}`, { token: owner.token })).body.data.title).toBe('kept');
    expect((await versions(a.id)).body.total).toBe(1);
  });
});

describe('simple versioning (audit log)', () => {
  it('keeps field diffs per change, encrypted values masked', async () => {
    const member = await server.user();
    await server.call('POST', '/api/v1/organizations', {
      token: admin.token,
      body: { name: 'Audit Org', members: [member.id] },
    });
    const p = (
      await server.call('POST', '/api/v1/projects', {
        token: member.token,
        body: { name: 'P', code: 'AUD-1', hours: 1, deployToken: 'secret-1' },
      })
    ).body.data;
    await server.call('PATCH', `/api/v1/projects/${p.id}`, {
      token: member.token,
      headers: { 'x-change-reason': 'rename' },
      body: { name: 'P2', deployToken: 'secret-2' },
    });
    const audit = await server.call('GET', `/api/v1/projects/${p.id}/audit`, { token: member.token });
    expect(audit.status).toBe(200);
    expect(audit.body).toMatchObject({ total: 2, hasMore: false });
    const [update, created] = audit.body.items;
    expect(update).toMatchObject({
      entityId: p.id,
      changedBy: member.id,
      changeType: 'update',
      changeReason: 'rename',
    });
    expect(update.changes).toEqual({
      name: { old: 'P', new: 'P2' },
      deployToken: { old: '[ENCRYPTED]', new: '[ENCRYPTED]' },
    });
    expect(created.changeType).toBe('create');
    expect(JSON.stringify(audit.body)).not.toMatch(/secret-|v1\./);
    expect((await server.call('GET', `/api/v1/articles/${p.id}/audit`, { token: member.token })).status).toBe(404);
  });
});

describe('tracked fields', () => {
  it('records a pending change only when the value changes; admins approve or reject once', async () => {
    const a = await create({ title: 't', body: 'b', price: 5 });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, {
      token: owner.token,
      body: { price: 5, title: 'same price' },
    });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, {
      token: owner.token,
      headers: { 'x-change-reason': 'sale' },
      body: { price: 4 },
    });
    await server.call('PATCH', `/api/v1/articles/${a.id}`, { token: owner.token, body: { price: 3 } });
    const changes = await server.call('GET', `/api/v1/articles/${a.id}/field-changes`, { token: owner.token });
    expect(changes.body.items.map((c: { oldValue: number; newValue: number }) => [c.oldValue, c.newValue])).toEqual([
      [4, 3],
      [5, 4],
    ]);
    const sale = changes.body.items[1];
    expect(sale).toMatchObject({
      fieldName: 'price',
      approvalStatus: 'pending',
      changeReason: 'sale',
      changedBy: owner.id,
    });

    const path = `/api/v1/articles/${a.id}/field-changes/${sale.id}`;
    expect(
      (await server.call('PUT', path, { token: owner.token, body: { approvalStatus: 'approved', approvedBy: 'me' } }))
        .status,
    ).toBe(403);
    const approved = await server.call('PUT', path, {
      token: admin.token,
      body: { approvalStatus: 'approved', approvedBy: 'Finance' },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: sale.id, approvalStatus: 'approved', approvedBy: 'Finance' });
    expect((await server.call('PUT', path, { token: admin.token, body: { approvalStatus: 'rejected' } })).status).toBe(
      422,
    );
    const rejected = await server.call('PUT', `/api/v1/articles/${a.id}/field-changes/${changes.body.items[0].id}`, {
      token: admin.token,
      body: { approvalStatus: 'rejected' },
    });
    expect(rejected.body).toMatchObject({ approvalStatus: 'rejected', approvedBy: admin.id });
    expect((await server.call('GET', `/api/v1/articles/${a.id}`, { token: owner.token })).body.data.price).toBe(3);

    const pending = await server.call(
      'GET',
      `/api/v1/articles/${a.id}/field-changes?approvalStatus=approved&fieldName=price`,
      { token: owner.token },
    );
    expect(pending.body.items.map((c: { id: string }) => c.id)).toEqual([sale.id]);
    expect(
      (await server.call('GET', `/api/v1/articles/${a.id}/field-changes?approvalStatus=maybe`, { token: owner.token }))
        .status,
    ).toBe(400);
    expect((await server.call('PUT', path, { token: admin.token, body: { approvalStatus: 'pending' } })).status).toBe(
      400,
    );
  });
});

describe('the field-change queue across entities (GET /field-changes)', () => {
  it('lists pending changes of every entity for admins, newest first, by entity and status, in pages', async () => {
    const a = await create({ title: 'queued', body: 'b', price: 1 });
    for (const price of [2, 3, 4]) {
      await server.call('PATCH', `/api/v1/articles/${a.id}`, { token: owner.token, body: { price } });
    }
    const all = await server.call('GET', '/api/v1/field-changes?approvalStatus=pending&entity=articles&limit=2', {
      token: admin.token,
    });
    expect(all.status).toBe(200);
    expect(all.body.items).toHaveLength(2);
    expect(all.body.items[0]).toMatchObject({ entity: 'articles', entityId: a.id, fieldName: 'price', newValue: 4 });
    expect(all.body.items[1]).toMatchObject({ newValue: 3 });
    expect(all.body.hasMore).toBe(true);
    expect(all.body.total).toBeGreaterThanOrEqual(4);
    const next = await server.call(
      'GET',
      `/api/v1/field-changes?approvalStatus=pending&entity=articles&limit=2&cursor=${encodeURIComponent(all.body.nextCursor)}`,
      { token: admin.token },
    );
    // The next page goes on where the first ended (the create itself records no change).
    expect(next.body.items[0]).toMatchObject({ entityId: a.id, newValue: 2 });

    // Deciding one takes it out of the pending queue.
    const decided = await server.call('PUT', `/api/v1/articles/${a.id}/field-changes/${all.body.items[0].id}`, {
      token: admin.token,
      body: { approvalStatus: 'approved', approvedBy: admin.id },
    });
    expect(decided.status).toBe(200);
    const after = await server.call('GET', '/api/v1/field-changes?approvalStatus=pending&entity=articles&limit=200', {
      token: admin.token,
    });
    expect(after.body.items.some((c: { id: string }) => c.id === all.body.items[0].id)).toBe(false);
    const approved = await server.call('GET', '/api/v1/field-changes?approvalStatus=approved', { token: admin.token });
    expect(approved.body.items.some((c: { id: string }) => c.id === all.body.items[0].id)).toBe(true);
  });

  it('is for admins only, and refuses unknown entities, statuses and parameters', async () => {
    expect((await server.call('GET', '/api/v1/field-changes')).status).toBe(401);
    expect((await server.call('GET', '/api/v1/field-changes', { token: owner.token })).status).toBe(403);
    const bad = await server.call('GET', '/api/v1/field-changes?entity=comments&approvalStatus=maybe', {
      token: admin.token,
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.details).sort()).toEqual(['approvalStatus', 'entity']);
    for (const query of ['entity=users', 'entity=__proto__', 'limit=0', 'limit=201', 'cursor=forged', 'sort=id']) {
      expect((await server.call('GET', `/api/v1/field-changes?${query}`, { token: admin.token })).status).toBe(400);
    }
  });
});
