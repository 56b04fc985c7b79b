import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('references must name records that exist and that the caller may see', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let reader: { id: string; token: string };
  let published: string;
  let draft: string;
  const missing = 'ffffffffffffffffffffffff';

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
    reader = await server.user();
    const make = async (body: Record<string, unknown>) =>
      (await server.call('POST', '/api/v1/articles', { token: admin.token, body })).body.data.id as string;
    published = await make({ title: 'Out', body: 'b', status: 'published' });
    draft = await make({ title: 'Hidden', body: 'b' });
  });
  afterAll(() => server.close());

  it('answers 422 for a missing and for an invisible record, and 201 for a visible one', async () => {
    const comment = (article: string) =>
      server.call('POST', '/api/v1/comments', { token: reader.token, body: { article, body: 'hi' } });
    const gone = await comment(missing);
    expect(gone.status).toBe(422);
    expect(gone.body.error.code).toBe('UNPROCESSABLE_ENTITY');
    expect(gone.body.error.details.article).toMatch(/names no Article you can see/);
    // The reader may only see published articles: a draft's id is as unknown as a missing one.
    const hidden = await comment(draft);
    expect(hidden.status).toBe(422);
    expect(hidden.body.error.details.article).toBe(gone.body.error.details.article.replace(missing, draft));
    const fine = await comment(published);
    expect(fine.status).toBe(201);

    const moved = await server.call('PATCH', `/api/v1/comments/${fine.body.data.id}`, {
      token: reader.token,
      body: { article: missing },
    });
    expect(moved.status).toBe(422);
    expect(moved.body.error.details.article).toBeDefined();
    // Nothing was stored by the refused writes.
    const mine = await server.call('GET', '/api/v1/comments?includeArchived=true', { token: admin.token });
    expect(mine.body.data.items.map((c: { article: string }) => c.article)).toEqual([published]);
  });

  it('names each bad item of a bulk create and each bad element of an array of references', async () => {
    const bulk = await server.call('POST', '/api/v1/comments/bulk', {
      token: reader.token,
      body: {
        items: [
          { article: published, body: 'a' },
          { article: draft, body: 'b' },
          { article: missing, body: 'c' },
        ],
      },
    });
    expect(bulk.status).toBe(422);
    expect(Object.keys(bulk.body.error.details).sort()).toEqual(['items.1.article', 'items.2.article']);

    const related = await server.call('POST', '/api/v1/articles', {
      token: admin.token,
      body: { title: 'Links', body: 'b', related: [published, missing, draft] },
    });
    expect(related.status).toBe(422);
    expect(Object.keys(related.body.error.details)).toEqual(['related.1']);
  });

  it('accepts a reference to an existing user and refuses one to no user', async () => {
    const author = await server.call('POST', '/api/v1/articles', {
      token: admin.token,
      body: { title: 'By reader', body: 'b', author: reader.id },
    });
    expect(author.status).toBe(201);
    const nobody = await server.call('POST', '/api/v1/articles', {
      token: admin.token,
      body: { title: 'By nobody', body: 'b', author: missing },
    });
    expect(nobody.status).toBe(422);
    expect(nobody.body.error.details.author).toMatch(/User/);
  });
});
