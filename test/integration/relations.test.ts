import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

interface Related {
  items: { id: string; body?: string; title?: string }[];
  totalCount: number;
}

describe('reverse relations', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let reader: { id: string; token: string };
  let article: string;
  let draft: string;
  const comments: string[] = [];

  const post = async (path: string, body: unknown, token = admin.token) => {
    const res = await server.call('POST', `/api/v1/${path}`, { token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string };
  };
  const get = async (path: string, token = admin.token) => {
    const res = await server.call('GET', `/api/v1/${path}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
    reader = await server.user();
    article = (await post('articles', { title: 'Seen', body: 'b', status: 'published' })).id;
    draft = (await post('articles', { title: 'Draft', body: 'b', status: 'draft' })).id;
    for (const [body, approved] of [
      ['first', true],
      ['second', false],
      ['third', true],
    ] as const)
      comments.push((await post('comments', { article, body, approved })).id);
    await post('comments', { article: draft, body: 'on the draft', approved: true });
  });
  afterAll(() => server.close());

  it('populates the referencing records the caller may see, newest first, with their count', async () => {
    const all = await get(`articles/${article}?populate=comments`);
    expect(all.comments.totalCount).toBe(3);
    expect(all.comments.items.map((c: { body: string }) => c.body)).toEqual(['third', 'second', 'first']);
    // USER sees approved comments only.
    const seen = await get(`articles/${article}?populate=comments`, reader.token);
    expect(seen.comments).toMatchObject({ totalCount: 2, items: [{ body: 'third' }, { body: 'first' }] });
    // Without populate the relation is absent.
    expect(await get(`articles/${article}`)).not.toHaveProperty('comments');
  });

  it('populates relations on every record of a list, beside reference fields', async () => {
    const list = await get('articles?populate=comments,author&sort=title');
    const byTitle = Object.fromEntries(
      (list.items as { title: string; comments: Related }[]).map((a) => [a.title, a.comments]),
    );
    expect(byTitle.Draft.items.map((c) => c.body)).toEqual(['on the draft']);
    expect(byTitle.Seen.totalCount).toBe(3);
  });

  it('lists them at GET /{plural}/{id}/{relation} with the full list query language', async () => {
    const approved = await get(`articles/${article}/comments?approved=true&sort=body`);
    expect(approved.items.map((c: { body: string }) => c.body)).toEqual(['first', 'third']);
    expect(approved.totalCount).toBe(2);
    const first = await get(`articles/${article}/comments?limit=2&select=body`);
    expect(first.items).toEqual([
      { id: comments[2], body: 'third' },
      { id: comments[1], body: 'second' },
    ]);
    const next = await get(`articles/${article}/comments?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(next.items.map((c: { id: string }) => c.id)).toEqual([comments[0]]);
    const searched = await get(`articles/${article}/comments?q=thi`);
    expect(searched.items.map((c: { body: string }) => c.body)).toEqual(['third']);
    expect((await get(`articles/${article}/comments`, reader.token)).totalCount).toBe(2);
  });

  it('answers 404 for a record the caller may not see, and 400 for bad parameters', async () => {
    const hidden = await server.call('GET', `/api/v1/articles/${draft}/comments`, { token: reader.token });
    expect(hidden.status).toBe(404);
    expect(
      (await server.call('GET', `/api/v1/articles/${'f'.repeat(24)}/comments`, { token: admin.token })).status,
    ).toBe(404);
    expect((await server.call('GET', '/api/v1/articles/nope/comments', { token: admin.token })).status).toBe(404);
    const bad = await server.call('GET', `/api/v1/articles/${article}/comments?kind=news`, { token: admin.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual({ kind: 'is not a known query parameter' });
    const deep = await server.call('GET', `/api/v1/articles/${article}?populate=comments.article`, {
      token: admin.token,
    });
    expect(deep.status).toBe(400);
    expect(deep.body.error.details.populate).toMatch(
      /one level deep; use GET \/articles\/\{id\}\/comments\?populate=article/,
    );
  });

  it('follows an array of references too', async () => {
    const citing = await post('articles', { title: 'Citing', body: 'b', status: 'published', related: [article] });
    const cited = await get(`articles/${article}?populate=citedBy`);
    expect(cited.citedBy).toEqual({ totalCount: 1, items: [expect.objectContaining({ id: citing.id })] });
    const listed = await get(`articles/${article}/citedBy`);
    expect(listed.items.map((a: { id: string }) => a.id)).toEqual([citing.id]);
  });

  it('places at most 100 records per relation and record, and still counts them all', async () => {
    const busy = (await post('articles', { title: 'Busy', body: 'b', status: 'published' })).id;
    const made = await server.call('POST', '/api/v1/comments/bulk', {
      token: admin.token,
      body: { items: Array.from({ length: 105 }, (_, i) => ({ article: busy, body: `c${i}` })) },
    });
    expect(made.status).toBe(201);
    const populated = await get(`articles/${busy}?populate=comments`);
    expect(populated.comments.totalCount).toBe(105);
    expect(populated.comments.items).toHaveLength(100);
    expect((await get(`articles/${busy}/comments?limit=200`)).items).toHaveLength(105);
  });

  it('is in the metadata and the typed client', async () => {
    const metadata = await get('articles/metadata');
    expect(metadata.relations).toEqual([
      {
        name: 'comments',
        label: 'Comments',
        entity: 'comments',
        field: 'article',
        description: 'The comments on this article, newest first',
      },
      { name: 'citedBy', label: 'Cited by', entity: 'articles', field: 'related', description: null },
    ]);
    const client = createClient({ baseUrl: server.url, token: admin.token });
    const page = await client.articles.comments(article, { approved: true, limit: 1 });
    expect(page.totalCount).toBe(2);
    expect(page.items[0].body).toBe('third');
    const record = await client.articles.get(article, { populate: ['comments'] });
    expect(record.comments?.totalCount).toBe(3);
  });
});
