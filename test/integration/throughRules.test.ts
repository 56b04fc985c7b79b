import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openSse, type SseStream } from '../support/sse.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

type Who = { id: string; token: string };

/**
 * `comments:view:@article`: a comment is visible to whoever may view its article. Readers view
 * the articles they author (`articles:view:author:{{user.id}}`), so each sees exactly the
 * comments on those, on every read path.
 */
describe('rules through a reference: @field', () => {
  let server: TestServer;
  let admin: Who;
  const readers: Who[] = [];
  const streams: SseStream[] = [];
  /** Articles by id: the reader who authors it (or none). */
  const authorOf = new Map<string, string | undefined>();
  /** Comments by id: the article it is on. */
  const articleOf = new Map<string, string>();

  beforeAll(async () => {
    server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS } });
    admin = (await server.user({ roles: ['ADMIN'] })) as Who;
    const role = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: {
        key: 'READER',
        label: 'Reader',
        permissions: [
          'articles:view:author:{{user.id}}',
          'comments:view:@article',
          'comments:create:@article',
          'comments:edit:@article',
          'grants:create',
        ],
      },
    });
    expect(role.status).toBe(201);
    for (let i = 0; i < 3; i++) readers.push((await server.user({ roles: ['READER'] })) as Who);
    // A seeded random arrangement: 12 articles, each by one of the readers or nobody, 40 comments.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 12; i++) {
      const author = random(4) === 3 ? undefined : readers[random(3)].id;
      const made = await server.call('POST', '/api/v1/articles', {
        token: admin.token,
        body: { title: `Article ${i}`, body: 'text', ...(author ? { author } : {}) },
      });
      authorOf.set(made.body.data.id, author);
    }
    const articles = [...authorOf.keys()];
    for (let i = 0; i < 40; i++) {
      const article = articles[random(articles.length)];
      const made = await server.call('POST', '/api/v1/comments', {
        token: admin.token,
        body: { article, body: `remark ${i}` },
      });
      expect(made.status).toBe(201);
      articleOf.set(made.body.data.id, article);
    }
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(() => server.close());

  const as = (who: { token: string }) => (method: string, path: string, body?: unknown) =>
    server.call(method, path, { token: who.token, body });
  /** What the rules say, worked out by hand from the arrangement. */
  const expected = (reader: Who) =>
    [...articleOf].filter(([, article]) => authorOf.get(article) === reader.id).map(([comment]) => comment);
  const ids = (items: { id: string }[]) => items.map((item) => item.id).sort();

  it('lists, counts, aggregates and gets exactly the comments on articles the caller may view', async () => {
    for (const reader of readers) {
      const want = expected(reader).sort();
      const list = await as(reader)('GET', '/api/v1/comments?limit=100');
      expect(list.status).toBe(200);
      expect(ids(list.body.data.items)).toEqual(want);
      expect(list.body.data.totalCount).toBe(want.length);
      // Pages stay full: the rule is part of the query, not a filter after it.
      if (want.length > 2) {
        const page = await as(reader)('GET', '/api/v1/comments?limit=2');
        expect(page.body.data.items).toHaveLength(2);
      }
      const aggregate = await as(reader)('GET', '/api/v1/comments/aggregate?groupBy=article');
      expect(aggregate.status).toBe(200);
      const counted = Object.fromEntries(
        aggregate.body.data.groups.map((g: { key: { article: string }; count: number }) => [g.key.article, g.count]),
      );
      const byArticle: Record<string, number> = {};
      for (const comment of want) byArticle[articleOf.get(comment)!] = (byArticle[articleOf.get(comment)!] ?? 0) + 1;
      expect(counted).toEqual(byArticle);
      for (const [comment] of articleOf) {
        const status = (await as(reader)('GET', `/api/v1/comments/${comment}`)).status;
        expect(status, comment).toBe(want.includes(comment) ? 200 : 404);
      }
    }
  });

  it('holds for search, the reverse relation and populate', async () => {
    const reader = readers[0];
    const want = expected(reader).sort();
    const found = await as(reader)('GET', '/api/v1/search?q=remark&limit=100');
    expect(found.status).toBe(200);
    const hits = found.body.data.items.filter((hit: { entity: string }) => hit.entity === 'comments');
    expect(ids(hits)).toEqual(want);
    const own = [...authorOf].find(([, author]) => author === reader.id)![0];
    const relation = await as(reader)('GET', `/api/v1/articles/${own}/comments?limit=100`);
    expect(relation.status).toBe(200);
    expect(ids(relation.body.data.items)).toEqual(want.filter((c) => articleOf.get(c) === own));
    const populated = await as(reader)('GET', `/api/v1/articles/${own}?populate=comments`);
    expect(ids(populated.body.data.comments.items)).toEqual(want.filter((c) => articleOf.get(c) === own));
    // Forward: a visible comment's article is the caller's own, so it is filled in.
    const comment = await as(reader)('GET', `/api/v1/comments/${want[0]}?populate=article`);
    expect(comment.status).toBe(200);
    expect(comment.body.data.article).toMatchObject({ id: articleOf.get(want[0]) });
  });

  it('follows a change of the referenced record at once, counts included', async () => {
    const [first, second] = readers;
    const moved = [...authorOf].find(([, author]) => author === first.id)![0];
    const before = (await as(second)('GET', '/api/v1/comments?limit=1')).body.data.totalCount;
    const onIt = [...articleOf.values()].filter((article) => article === moved).length;
    expect((await as(admin)('PATCH', `/api/v1/articles/${moved}`, { author: second.id })).status).toBe(200);
    authorOf.set(moved, second.id);
    expect((await as(second)('GET', '/api/v1/comments?limit=1')).body.data.totalCount).toBe(before + onIt);
    expect(ids((await as(first)('GET', '/api/v1/comments?limit=100')).body.data.items)).toEqual(expected(first).sort());
  });

  it('creates and edits only on viewable records', async () => {
    const reader = readers[2];
    const own = [...authorOf].find(([, author]) => author === reader.id)?.[0];
    const other = [...authorOf].find(([, author]) => author !== reader.id)![0];
    if (own) {
      const made = await as(reader)('POST', '/api/v1/comments', { article: own, body: 'mine' });
      expect(made.status).toBe(201);
      articleOf.set(made.body.data.id, own);
      expect((await as(reader)('PATCH', `/api/v1/comments/${made.body.data.id}`, { body: 'edited' })).status).toBe(200);
    }
    // An article the caller may not view is, to it, no article at all: refused before the rule.
    const refused = await as(reader)('POST', '/api/v1/comments', { article: other, body: 'not mine' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toHaveProperty('article');
    const stored = await as(admin)('GET', `/api/v1/comments?article=${other}&limit=100`);
    expect(stored.body.data.items.map((c: { body: string }) => c.body)).not.toContain('not mine');
    const theirs = [...articleOf].find(([, article]) => authorOf.get(article) !== reader.id)![0];
    expect((await as(reader)('PATCH', `/api/v1/comments/${theirs}`, { body: 'x' })).status).toBe(404);
  });

  it('lets a caller share what its rule through a reference reaches, and nothing else', async () => {
    // A reader with a commented article of its own, and another reader.
    const first = readers.find((r) => [...articleOf.values()].some((article) => authorOf.get(article) === r.id))!;
    const second = readers.find((r) => r !== first)!;
    const mine = [...articleOf].find(([, article]) => authorOf.get(article) === first.id)![0];
    const notMine = [...articleOf].find(([, article]) => authorOf.get(article) !== first.id)![0];
    const share = (entityId: string) =>
      as(first)('POST', '/api/v1/grants', {
        entity: 'comments',
        entityId,
        grantedTo: second.id,
        permissions: ['view'],
      });
    expect((await share(mine)).status).toBe(201);
    expect((await as(second)('GET', `/api/v1/comments/${mine}`)).status).toBe(200);
    expect((await share(notMine)).status).toBe(404);
  });

  it('streams a comment only to those who may view its article', async () => {
    const [first, second] = readers;
    const firstStream = await openSse(`${server.url}/api/v1/realtime?entities=comments`, { token: first.token });
    const secondStream = await openSse(`${server.url}/api/v1/realtime?entities=comments`, { token: second.token });
    streams.push(firstStream, secondStream);
    const ofFirst = [...authorOf].find(([, author]) => author === first.id)![0];
    const ofSecond = [...authorOf].find(([, author]) => author === second.id)![0];
    const a = await as(admin)('POST', '/api/v1/comments', { article: ofFirst, body: 'for the first' });
    const b = await as(admin)('POST', '/api/v1/comments', { article: ofSecond, body: 'for the second' });
    await firstStream.next((e) => e.event === 'comments.created' && e.data.id === a.body.data.id);
    await secondStream.next((e) => e.event === 'comments.created' && e.data.id === b.body.data.id);
    const seen = (stream: SseStream) => stream.events.map((e) => e.data?.id);
    expect(seen(firstStream)).not.toContain(b.body.data.id);
    expect(seen(secondStream)).not.toContain(a.body.data.id);
  });

  it("shows a comment's audit trail to whoever may view its article, before and after it is deleted", async () => {
    const [first, second] = readers;
    const article = [...authorOf].find(([, author]) => author === first.id)![0];
    const made = await as(admin)('POST', '/api/v1/comments', { article, body: 'first words' });
    const comment = made.body.data.id as string;
    expect((await as(admin)('PATCH', `/api/v1/comments/${comment}`, { body: 'second thoughts' })).status).toBe(200);
    const trail = await as(first)('GET', `/api/v1/comments/${comment}/audit`);
    expect(trail.status).toBe(200);
    expect(trail.body.items.map((entry: { changeType: string }) => entry.changeType)).toEqual(['update', 'create']);
    expect((await as(second)('GET', `/api/v1/comments/${comment}/audit`)).status).toBe(404);
    // Deleted: its last state, rebuilt from the trail, is still on the first reader's article.
    expect((await as(admin)('DELETE', `/api/v1/comments/${comment}`)).status).toBe(200);
    expect((await as(first)('GET', `/api/v1/comments/${comment}/audit`)).status).toBe(200);
    expect((await as(second)('GET', `/api/v1/comments/${comment}/audit`)).status).toBe(404);
    // The article moves to the second reader: so does the trail of the comment on it.
    expect((await as(admin)('PATCH', `/api/v1/articles/${article}`, { author: second.id })).status).toBe(200);
    expect((await as(first)('GET', `/api/v1/comments/${comment}/audit`)).status).toBe(404);
    expect((await as(second)('GET', `/api/v1/comments/${comment}/audit`)).status).toBe(200);
    expect((await as(admin)('PATCH', `/api/v1/articles/${article}`, { author: first.id })).status).toBe(200);
  });

  it('scopes a custom endpoint on a record by the rule through its reference', async () => {
    // Suppliers see the products they supply, and approve the orders of those products only.
    const role = await as(admin)('POST', '/api/v1/roles', {
      key: 'SUPPLIER',
      label: 'Supplier',
      permissions: ['products:view:supplierEmail:{{user.email}}', 'orders:view:@product', 'orders:approve:@product'],
    });
    expect(role.status).toBe(201);
    const supplier = (await server.user({ roles: ['SUPPLIER'], email: 'supplier@example.test' })) as Who;
    const product = async (sku: string, supplierEmail: string) =>
      (await as(admin)('POST', '/api/v1/products', { name: sku, sku, price: 2, stock: 10, supplierEmail })).body.data
        .id as string;
    const order = async (productId: string) =>
      (await as(admin)('POST', '/api/v1/orders', { product: productId, quantity: 1 })).body.data.id as string;
    const theirs = await order(await product('THEIRS-1', 'supplier@example.test'));
    const others = await order(await product('OTHERS-1', 'someone@example.test'));
    const approve = (id: string) => as(supplier)('POST', `/api/v1/orders/${id}/approve`, { note: 'shipped' });
    expect((await approve(others)).status).toBe(404);
    const approved = await approve(theirs);
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ id: theirs, status: 'approved' });
    const listed = await as(supplier)('GET', '/api/v1/orders?limit=100');
    expect(ids(listed.body.data.items)).toEqual([theirs]);
  });

  it('answers the same, read after read, for a caller who may view many referenced records', async () => {
    // Enough articles that the store keeps the ids the rule reaches rather than binding them
    // each time; every read is checked, and so is each read after the set changes.
    const reader = (await server.user({ roles: ['READER'] })) as Who;
    const mine: string[] = [];
    const onMine = new Map<string, string>();
    for (let i = 0; i < 24; i++) {
      const made = await as(admin)('POST', '/api/v1/articles', { title: `Many ${i}`, body: 'text', author: reader.id });
      mine.push(made.body.data.id);
      if (i % 3 === 0) {
        const comment = await as(admin)('POST', '/api/v1/comments', { article: made.body.data.id, body: `many ${i}` });
        onMine.set(comment.body.data.id, made.body.data.id);
      }
    }
    const check = async () => {
      for (let read = 0; read < 3; read++) {
        const list = await as(reader)('GET', '/api/v1/comments?limit=100');
        expect(ids(list.body.data.items)).toEqual([...onMine.keys()].sort());
        expect(list.body.data.totalCount).toBe(onMine.size);
      }
    };
    await check();
    // An article leaves the reader: its comments go with it.
    expect((await as(admin)('PATCH', `/api/v1/articles/${mine[0]}`, { author: admin.id })).status).toBe(200);
    for (const [comment, article] of onMine) if (article === mine[0]) onMine.delete(comment);
    await check();
    // A comment on another reader's article never shows, however often the list is read.
    const elsewhere = [...authorOf].find(([, author]) => author !== undefined)![0];
    await as(admin)('POST', '/api/v1/comments', { article: elsewhere, body: 'not theirs' });
    await check();
  });

  it('refuses a rule through a field that is not a reference when a role is saved', async () => {
    const refused = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'BROKEN', label: 'Broken', permissions: ['comments:view:@body', 'comments:view:@article:own'] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual({
      'permissions.0':
        '"comments:view:@body": @body must name a reference (objectId with ref, or an array of them); body is string',
      'permissions.1': '"comments:view:@article:own": a rule through a reference stands alone: entity:action:@field',
    });
  });
});

/**
 * `notes:view:@follows`: a note is visible to whoever may view the note it follows. Notes keep a
 * trash, and a note in the trash is deleted to everyone: the notes that follow it go out of sight
 * with it on every read path, and come back with it.
 */
describe('rules through a reference to an entity with a trash', () => {
  let server: TestServer;
  let admin: Who;
  let follower: Who;

  beforeAll(async () => {
    server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS } });
    admin = (await server.user({ roles: ['ADMIN'] })) as Who;
    const role = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: {
        key: 'FOLLOWER',
        label: 'Follower',
        permissions: ['notes:create', 'notes:view:own', 'notes:view:@follows'],
      },
    });
    expect(role.status).toBe(201);
    follower = (await server.user({ roles: ['FOLLOWER'] })) as Who;
  });
  afterAll(() => server.close());

  it('stops at a parent in the trash for lists, counts, aggregations, get, search and populate', async () => {
    // The follower's own note, and the admin's note that follows it.
    const parent = await server.call('POST', '/api/v1/notes', {
      token: follower.token,
      body: { title: 'parent words' },
    });
    expect(parent.status).toBe(201);
    const parentId = parent.body.data.id as string;
    const child = await server.call('POST', '/api/v1/notes', {
      token: admin.token,
      body: { title: 'child words', follows: parentId },
    });
    expect(child.status).toBe(201);
    const childId = child.body.data.id as string;
    const as = (path: string) => server.call('GET', path, { token: follower.token });
    const seen = async () => {
      const list = await as('/api/v1/notes?limit=100');
      const aggregate = await as('/api/v1/notes/aggregate?groupBy=pinned');
      const search = await as('/api/v1/search?q=words&limit=100');
      return {
        list: list.body.data.items.map((n: { id: string }) => n.id).sort(),
        total: list.body.data.totalCount,
        counted: aggregate.body.data.groups.reduce((sum: number, g: { count: number }) => sum + g.count, 0),
        get: (await as(`/api/v1/notes/${childId}`)).status,
        search: search.body.data.items.map((hit: { id: string }) => hit.id).sort(),
      };
    };
    // Asked twice: the second answer comes from what the server remembers.
    for (let i = 0; i < 2; i++)
      expect(await seen()).toEqual({
        list: [parentId, childId].sort(),
        total: 2,
        counted: 2,
        get: 200,
        search: [parentId, childId].sort(),
      });

    expect((await server.call('DELETE', `/api/v1/notes/${parentId}`, { token: admin.token })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect(await seen()).toEqual({ list: [], total: 0, counted: 0, get: 404, search: [] });
    // An administrator sees the child, which no longer passes the rule.
    const populated = await server.call('GET', `/api/v1/notes/${childId}?populate=follows`, { token: admin.token });
    expect(populated.status).toBe(200);

    expect(
      (await server.call('POST', `/api/v1/notes/${parentId}/restore-from-trash`, { token: admin.token })).status,
    ).toBe(200);
    expect((await seen()).list).toEqual([parentId, childId].sort());
  });
});
