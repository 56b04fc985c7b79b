import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FindQuery, Where } from '../../runtime/store/types.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

// 20 published articles that each relate to all 20: the shape that once took 18 s and 1.9 GB.
let server: TestServer;
let admin: { id: string; token: string };
const ids: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  admin = await server.user({ roles: ['ADMIN'] });
  const items = Array.from({ length: 20 }, (_, i) => ({
    title: `Web ${i}`,
    body: 'x'.repeat(200),
    status: 'published',
  }));
  const created = await server.call('POST', '/api/v1/articles/bulk', { token: admin.token, body: { items } });
  ids.push(...created.body.data.items.map((a: { id: string }) => a.id));
  for (const id of ids)
    await server.call('PATCH', `/api/v1/articles/${id}`, { token: admin.token, body: { related: ids } });
});
afterAll(() => server.close());

const list = (query: string, token?: string) => server.call('GET', `/api/v1/articles?limit=20&${query}`, { token });

/** Records of `plural` the store was asked for by id while `run` ran. */
async function idLookups(plural: string, run: () => Promise<unknown>): Promise<string[]> {
  const store = server.ctx.store;
  const find = store.find.bind(store);
  const asked: string[] = [];
  store.find = async (collection: string, query: FindQuery = {}) => {
    const where = query.where as (Where & { field?: string; op?: string; value?: unknown }) | undefined;
    const byId =
      where && 'and' in where
        ? (where.and as { field?: string; op?: string; value?: unknown }[]).find((w) => w.field === 'id')
        : where;
    if (collection === plural && byId?.field === 'id' && byId.op === 'in') asked.push(...(byId.value as string[]));
    return find(collection, query);
  };
  try {
    await run();
  } finally {
    store.find = find;
  }
  return asked;
}

describe('populate is bounded', () => {
  it.each([
    ['depth 4, admin', 'populate[paths][]=related.related.related.related&populate[depth]=4', 'admin'],
    ['depth 3, anonymous', 'populate[paths][]=related.related.related&populate[depth]=3', 'anonymous'],
  ])('refuses a runaway answer with a 400 naming the limit (%s)', async (_name, query, who) => {
    const started = Date.now();
    const res = await list(query, who === 'admin' ? admin.token : undefined);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.populate).toMatch(/at most 10000 records/);
    // Refused from a count, before anything was built: far from the 18 s it once took.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('answers what fits, each place a copy, and fetches each referenced record once', async () => {
    let res: Awaited<ReturnType<typeof list>> | undefined;
    const asked = await idLookups('articles', async () => {
      res = await list('populate[paths][]=related.related&populate[depth]=2', admin.token);
    });
    expect(res!.status).toBe(200);
    const items = res!.body.data.items;
    expect(items).toHaveLength(20);
    expect(items[0].related).toHaveLength(20);
    expect(items[0].related[0].related).toHaveLength(20);
    expect(items[0].related[0].related[0]).toMatchObject({
      id: expect.any(String),
      title: expect.stringMatching(/^Web /),
    });
    // The second level holds ids, not objects: depth 2 stops there.
    expect(typeof items[0].related[0].related[0].related[0]).toBe('string');
    expect(asked.length).toBe(new Set(asked).size);
    expect(new Set(asked)).toEqual(new Set(ids));
  });

  it('bounds a single record too', async () => {
    const res = await server.call(
      'GET',
      `/api/v1/articles/${ids[0]}?populate[paths][]=related.related.related.related&populate[depth]=4`,
      { token: admin.token },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details).toHaveProperty('populate');
  });
});

describe('populated users', () => {
  it('show only what the caller may view of users: { id } to strangers, the name to users:view, the email to admins and oneself', async () => {
    const author = await server.user({ displayName: 'Ada Author' });
    await server.call('PATCH', `/api/v1/articles/${ids[1]}`, { token: admin.token, body: { author: author.id } });
    const authorOf = async (token?: string) =>
      (await server.call('GET', `/api/v1/articles/${ids[1]}?populate=author`, { token })).body.data.author;

    expect(await authorOf()).toEqual({ id: author.id });
    expect(await authorOf((await server.user()).token)).toEqual({ id: author.id });
    expect(await authorOf(author.token)).toEqual({
      id: author.id,
      displayName: 'Ada Author',
      email: expect.any(String),
    });
    expect(await authorOf(admin.token)).toEqual({
      id: author.id,
      displayName: 'Ada Author',
      email: expect.any(String),
    });

    const role = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'READER', label: 'Reader', permissions: ['users:view'] },
    });
    expect(role.status).toBe(201);
    const reader = await server.user({ roles: ['READER'] });
    expect(await authorOf(reader.token)).toEqual({ id: author.id, displayName: 'Ada Author' });
  });
});
