import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
let admin: { id: string; token: string };
let author: { id: string; token: string };
let other: { id: string; token: string };
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer();
  admin = await server.user({ roles: ['ADMIN'] });
  author = await server.user();
  other = await server.user();
  const create = async (key: string, token: string, body: Record<string, unknown>) => {
    const created = await server.call('POST', '/api/v1/articles', { token, body });
    expect(created.status).toBe(201);
    ids[key] = created.body.data.id;
  };
  await create('titled', author.token, { title: 'Quantum gardening', body: 'Plants and qubits.', status: 'published' });
  await create('inBody', author.token, {
    title: 'Cooking notes',
    summary: 'A long read',
    body: `${'Flour and water. '.repeat(20)}Then a quantum leap in bread making, and more. ${'Salt. '.repeat(30)}`,
    status: 'published',
  });
  await create('draft', author.token, { title: 'Quantum draft', body: 'Unfinished.' });
  await create('othersDraft', other.token, { title: 'Quantum secrets', body: 'Private.' });
});
afterAll(() => server.close());

describe('GET /api/v1/search', () => {
  const search = (query: string, token?: string) => server.call('GET', `/api/v1/search?${query}`, { token });

  it('finds records the caller may view across entities, ranked, with a title and a snippet', async () => {
    const anonymous = await search('q=quant');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.data.totalCount).toBe(2);
    expect(anonymous.body.data.items.map((i: { id: string }) => i.id)).toEqual([ids.titled, ids.inBody]);
    const [first, second] = anonymous.body.data.items;
    expect(first).toEqual({
      entity: 'articles',
      id: ids.titled,
      title: 'Quantum gardening',
      snippet: 'Plants and qubits.',
    });
    expect(second.title).toBe('Cooking notes');
    expect(second.snippet).toMatch(/^….*quantum leap in bread.*…$/);
    expect(second.snippet.length).toBeLessThanOrEqual(162);

    const mine = await search('q=quantum', author.token);
    expect(mine.body.data.items.map((i: { id: string }) => i.id).sort()).toEqual(
      [ids.titled, ids.inBody, ids.draft].sort(),
    );
    const everything = await search('q=QUANTUM', admin.token);
    expect(everything.body.data.totalCount).toBe(4);
    expect(everything.body.data.items.map((i: { id: string }) => i.id)).toContain(ids.othersDraft);
  });

  it('needs every term, honours limit, and finds nothing for unknown words', async () => {
    expect((await search('q=quantum%20bread', admin.token)).body.data.items.map((i: { id: string }) => i.id)).toEqual([
      ids.inBody,
    ]);
    const limited = await search('q=quantum&limit=1', admin.token);
    expect(limited.body.data.items).toHaveLength(1);
    expect(limited.body.data.totalCount).toBe(4);
    expect((await search('q=zebra', admin.token)).body.data).toEqual({ items: [], totalCount: 0 });
  });

  it('answers bad parameters with 400 VALIDATION_ERROR naming them', async () => {
    for (const [query, field] of [
      ['', 'q'],
      ['q=%20', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['q=a&limit=0', 'limit'],
      ['q=a&limit=101', 'limit'],
      ['q=a&limit=two', 'limit'],
      ['q=a&sort=title', 'sort'],
    ]) {
      const response = await search(query);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
      expect(response.body.error.details).toHaveProperty(field);
    }
  });

  it('does not exist when the search feature is off', async () => {
    const off = await startTestServer(
      {},
      {
        registry: {
          ...registry,
          model: { ...registry.model, features: registry.model.features.filter((f) => f !== 'search') },
        },
      },
    );
    try {
      // Raw fetch: the generated document describes the app with the feature on.
      const response = await fetch(`${off.url}/api/v1/search?q=x`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    } finally {
      await off.close();
    }
  });
});
