import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
let user: { id: string; token: string };

beforeAll(async () => {
  server = await startTestServer();
  user = await server.user();
});
afterAll(() => server.close());

describe('cursor paging', () => {
  it('visits every record that existed exactly once while others are inserted', async () => {
    const items = Array.from({ length: 120 }, (_, i) => ({ title: `t${i}`, body: 'b' }));
    const created = await server.call('POST', '/api/v1/articles/bulk', { token: user.token, body: { items } });
    const existing = new Set<string>(created.body.data.items.map((i: { id: string }) => i.id));

    const seen: string[] = [];
    let cursor: string | undefined;
    let inserted = 0;
    do {
      const query = cursor ? `limit=7&cursor=${encodeURIComponent(cursor)}` : 'limit=7';
      const page = await server.call('GET', `/api/v1/articles?${query}`, { token: user.token });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.items.map((i: { id: string }) => i.id));
      cursor = page.body.data.nextCursor;
      // Writers keep adding records between pages.
      await server.call('POST', '/api/v1/articles', {
        token: user.token,
        body: { title: `new${inserted++}`, body: 'b' },
      });
    } while (cursor);

    const fromBefore = seen.filter((id) => existing.has(id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(fromBefore.length).toBe(existing.size);
  });

  it('pages ascending when sorted by id ascending', async () => {
    const first = await server.call('GET', '/api/v1/articles?limit=3&sort=id', { token: user.token });
    const second = await server.call(
      'GET',
      `/api/v1/articles?limit=3&cursor=${encodeURIComponent(first.body.data.nextCursor)}`,
      { token: user.token },
    );
    const ids = [...first.body.data.items, ...second.body.data.items].map((i: { id: string }) => i.id);
    expect(ids).toEqual([...ids].sort());
  });
});
