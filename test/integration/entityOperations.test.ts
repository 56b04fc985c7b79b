import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
let alice: { id: string; token: string };
let bob: { id: string; token: string };
let admin: { id: string; token: string };

beforeAll(async () => {
  server = await startTestServer();
  alice = await server.user({ displayName: 'Alice' });
  bob = await server.user({ displayName: 'Bob' });
  admin = await server.user({ roles: ['ADMIN'], displayName: 'Admin' });
});
afterAll(() => server.close());

const article = (extra: Record<string, unknown> = {}) => ({ title: 'Hello', body: 'World', ...extra });

describe('create', () => {
  it('answers 201 with the stored record: server fields, defaults, owner', async () => {
    const res = await server.call('POST', '/api/v1/articles', { token: alice.token, body: article({ tags: ['a'] }) });
    expect(res.status).toBe(201);
    const record = res.body.data;
    expect(record.id).toMatch(/^[0-9a-f]{24}$/);
    expect(record.ownerId).toBe(alice.id);
    expect(record.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(record.updatedAt).toBe(record.createdAt);
    expect(record.archivedAt).toBeNull();
    expect(record).toMatchObject({
      title: 'Hello',
      status: 'draft',
      views: 0,
      kind: 'news',
      featured: false,
      related: [],
      tags: ['a'],
    });
    expect(record.rating).toBeNull();
  });

  it('refuses unknown, server-set and wrongly typed fields, each in details', async () => {
    const res = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: { body: 5, id: 'x', ownerId: bob.id, createdAt: '2020-01-01', colour: 'red', views: 'many' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toMatchObject({
      title: 'is required',
      body: 'must be string',
      id: 'is not allowed',
      ownerId: 'is not allowed',
      createdAt: 'is not allowed',
      colour: 'is not allowed',
      views: 'must be integer or null',
    });
  });

  it('resolves macros in string values', async () => {
    const created = await server.call('POST', '/api/v1/articles', { token: alice.token, body: article() });
    const res = await server.call('POST', '/api/v1/comments', {
      token: alice.token,
      body: { article: created.body.data.id, body: 'by {{user.name}} <{{user.email}}> at {{now}} {{other}}' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.author).toBe('Alice');
    expect(res.body.data.body).toMatch(/^by Alice <user\d+-\w+@example\.test> at \d{4}-\d{2}-\d{2}T.+Z \{\{other\}\}$/);
  });

  it('answers 409 CONFLICT naming the unique field', async () => {
    await server.call('POST', '/api/v1/articles', { token: alice.token, body: article({ sku: 'SKU-1' }) });
    const res = await server.call('POST', '/api/v1/articles', { token: bob.token, body: article({ sku: 'SKU-1' }) });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'CONFLICT', details: { sku: 'must be unique' } });
  });

  it('needs a signed-in caller for owned entities', async () => {
    const res = await server.call('POST', '/api/v1/articles', { body: article() });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('stores encrypted fields encrypted and shows [ENCRYPTED]', async () => {
    const res = await server.call('POST', '/api/v1/projects', {
      token: admin.token,
      body: { name: 'P', code: 'ENC-1', deployToken: 'sk_live_secret' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.deployToken).toBe('[ENCRYPTED]');
    expect(res.body.data.homepage).toBeNull();
    const stored = await server.ctx.store.get('projects', res.body.data.id);
    expect(stored!.deployToken).toMatch(/^v1\./);
    expect(stored!.deployToken).not.toContain('sk_live_secret');
    expect(server.ctx.cipher.decrypt(stored!.deployToken as string)).toBe('sk_live_secret');
  });
});

describe('bodies', () => {
  it('malformed JSON is 400', async () => {
    const res = await server.call('POST', '/api/v1/articles', { token: alice.token, body: '{"title": ' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('a body that is not JSON is 400', async () => {
    const res = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: 'title=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({ 'content-type': 'must be application/json' });
  });

  it('a body over 1 MB is 413', async () => {
    const res = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: article({ body: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('get, update, delete', () => {
  it('gets, patches partially and deletes a record', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: article({ rating: 4.5 }),
    });
    const id = body.data.id;
    const got = await server.call('GET', `/api/v1/articles/${id}`, { token: alice.token });
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(body.data);

    const patched = await server.call('PATCH', `/api/v1/articles/${id}`, {
      token: alice.token,
      body: { title: 'Changed', rating: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ title: 'Changed', body: 'World', rating: null, ownerId: alice.id });
    expect(patched.body.data.updatedAt >= body.data.updatedAt).toBe(true);

    const removed = await server.call('DELETE', `/api/v1/articles/${id}`, { token: admin.token });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ data: { id, deleted: true } });
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: admin.token })).status).toBe(404);
  });

  it('hides records of others (404), refuses edits of viewable ones (403), and malformed ids are 404', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', { token: alice.token, body: article() });
    const id = body.data.id;
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: bob.token })).status).toBe(404);
    expect(
      (await server.call('PATCH', `/api/v1/articles/${id}`, { token: bob.token, body: { title: 'x' } })).status,
    ).toBe(404);
    expect((await server.call('GET', '/api/v1/articles/not-an-id', { token: alice.token })).status).toBe(404);

    // Published: everyone may view it; Bob still may not edit it.
    await server.call('PATCH', `/api/v1/articles/${id}`, { token: alice.token, body: { status: 'published' } });
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: bob.token })).status).toBe(200);
    expect((await server.call('GET', `/api/v1/articles/${id}`)).status).toBe(200);
    const edit = await server.call('PATCH', `/api/v1/articles/${id}`, { token: bob.token, body: { title: 'x' } });
    expect(edit.status).toBe(403);
    expect(edit.body.error.code).toBe('FORBIDDEN');
    // USER has no delete on articles: 403; anonymous: 401.
    expect((await server.call('DELETE', `/api/v1/articles/${id}`, { token: alice.token })).status).toBe(403);
    expect((await server.call('DELETE', `/api/v1/articles/${id}`)).status).toBe(401);
  });

  it('applies content status rules', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', { token: alice.token, body: article() });
    const id = body.data.id;
    const published = await server.call('PATCH', `/api/v1/articles/${id}`, {
      token: alice.token,
      body: { status: 'published' },
    });
    expect(published.body.data.publishedAt).toMatch(/Z$/);
    const archived = await server.call('PATCH', `/api/v1/articles/${id}`, {
      token: alice.token,
      body: { status: 'archived' },
    });
    expect(archived.status).toBe(200);
    const illegal = await server.call('PATCH', `/api/v1/articles/${id}`, {
      token: alice.token,
      body: { status: 'published' },
    });
    expect(illegal.status).toBe(422);
    expect(illegal.body.error.code).toBe('UNPROCESSABLE_ENTITY');
  });
});

describe('increment', () => {
  it('adds and subtracts atomically; 100 concurrent increments sum exactly', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', { token: alice.token, body: article() });
    const id = body.data.id;
    const down = await server.call('PATCH', `/api/v1/articles/${id}/increment`, {
      token: alice.token,
      body: { views: -3, rating: 1.5 },
    });
    expect(down.body.data).toMatchObject({ views: -3, rating: 1.5 });
    await Promise.all(
      Array.from({ length: 100 }, () =>
        server.call('PATCH', `/api/v1/articles/${id}/increment`, { token: alice.token, body: { views: 1 } }),
      ),
    );
    const after = await server.call('GET', `/api/v1/articles/${id}`, { token: alice.token });
    expect(after.body.data.views).toBe(97);
  });

  it('refuses non-numeric fields and fractions for int', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', { token: alice.token, body: article() });
    const res = await server.call('PATCH', `/api/v1/articles/${body.data.id}/increment`, {
      token: alice.token,
      body: { views: 0.5, title: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({ views: 'must be integer', title: 'is not allowed' });
  });
});

describe('numbers stay in range on every store', () => {
  const MAX = Number.MAX_SAFE_INTEGER;
  it('takes an int as a safe integer and a float as a finite number, 400 otherwise', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', { token: alice.token, body: article() });
    const patch = (raw: string) =>
      server.call('PATCH', `/api/v1/articles/${body.data.id}`, { token: alice.token, body: raw });
    for (const raw of [
      '{"views":9223372036854775807}',
      '{"views":1e308}',
      `{"views":${MAX + 1}}`,
      `{"views":${-MAX - 1}}`,
      '{"rating":1e309}',
      '{"rating":-1e400}',
    ]) {
      const res = await patch(raw);
      expect(res.status, raw).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await patch(`{"views":${MAX},"rating":1e308}`)).body.data).toMatchObject({ views: MAX, rating: 1e308 });
    expect(
      (await server.call('GET', `/api/v1/articles/${body.data.id}`, { token: alice.token })).body.data,
    ).toMatchObject({ views: MAX, rating: 1e308 });
  });

  it('refuses an increment whose result would leave the range with 422, changing nothing', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: article({ views: MAX - 1, rating: 1.7e308 }),
    });
    const id = body.data.id;
    const bump = (by: object) =>
      server.call('PATCH', `/api/v1/articles/${id}/increment`, { token: alice.token, body: by });
    const past = await bump({ views: 2 });
    expect(past.status).toBe(422);
    expect(past.body.error.details).toEqual({ views: `would leave the safe integer range (±${MAX})` });
    expect((await bump({ views: MAX })).status).toBe(422);
    const infinite = await bump({ rating: 1.7e308, views: 1 });
    expect(infinite.status).toBe(422);
    expect(infinite.body.error.details).toEqual({ rating: 'would no longer be a finite number' });
    const record = (await server.call('GET', `/api/v1/articles/${id}`, { token: alice.token })).body.data;
    expect(record).toMatchObject({ views: MAX - 1, rating: 1.7e308 });
    expect((await bump({ views: 1 })).body.data.views).toBe(MAX);
    expect((await bump({ views: -MAX })).body.data.views).toBe(0);
    // History recorded only the increments that happened: create + 2.
    expect((await server.call('GET', `/api/v1/articles/${id}/versions`, { token: alice.token })).body.total).toBe(3);
  });
});

describe('long text', () => {
  it('stores a 900 kB string in searchable, sortable and unique fields on every store, and still finds, sorts and guards it', async () => {
    const long = (word: string) => `${word} ${'lorem ipsum dolor sit amet '.repeat(34_000)}`.slice(0, 900_000);
    const ids: string[] = [];
    for (const [field, word] of [
      ['title', 'zebrafish'],
      ['body', 'quokka'],
      ['summary', 'axolotl'],
      ['sku', 'narwhal'],
    ] as const) {
      const res = await server.call('POST', '/api/v1/articles', {
        token: alice.token,
        body: article({ [field]: long(word) }),
      });
      expect(res.status, field).toBe(201);
      expect(res.body.data[field]).toHaveLength(900_000);
      ids.push(res.body.data.id);
    }
    const found = await server.call('GET', '/api/v1/articles?q=zebrafish%20lorem&select=title', { token: alice.token });
    expect(found.body.data.items.map((a: { id: string }) => a.id)).toEqual([ids[0]]);
    expect(
      (await server.call('GET', '/api/v1/articles?q=axolotl', { token: alice.token })).body.data.items.map(
        (a: { id: string }) => a.id,
      ),
    ).toEqual([ids[2]]);
    const duplicate = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: article({ sku: long('narwhal') }),
    });
    expect(duplicate.status).toBe(409);
    const sorted = await server.call('GET', '/api/v1/articles?sort=-title&limit=1&select=title', {
      token: alice.token,
    });
    expect(sorted.body.data.items[0].id).toBe(ids[0]);
    const changed = await server.call('PATCH', `/api/v1/articles/${ids[1]}`, {
      token: alice.token,
      body: { body: long('platypus') },
    });
    expect(changed.status).toBe(200);
    expect((await server.call('GET', '/api/v1/articles?q=platypus', { token: alice.token })).body.data.totalCount).toBe(
      1,
    );
  });
});

describe('bulk create', () => {
  it('creates all items in one go: 201 { items, count }', async () => {
    const res = await server.call('POST', '/api/v1/articles/bulk', {
      token: alice.token,
      body: { items: [article({ title: 'B1' }), article({ title: 'B2' })] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.count).toBe(2);
    expect(res.body.data.items.map((i: { title: string }) => i.title)).toEqual(['B1', 'B2']);
  });

  it('is all or nothing: one invalid item fails the lot with items.N details', async () => {
    const before = await server.call('GET', '/api/v1/articles?limit=1', { token: admin.token });
    const res = await server.call('POST', '/api/v1/articles/bulk', {
      token: alice.token,
      body: { items: [article(), { body: 'no title' }, article({ views: 'x' })] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({
      'items.1.title': 'is required',
      'items.2.views': 'must be integer or null',
    });
    const after = await server.call('GET', '/api/v1/articles?limit=1', { token: admin.token });
    expect(after.body.data.totalCount).toBe(before.body.data.totalCount);
  });

  it('rolls back on a unique conflict inside the batch', async () => {
    const before = (await server.call('GET', '/api/v1/articles?limit=1', { token: admin.token })).body.data.totalCount;
    const res = await server.call('POST', '/api/v1/articles/bulk', {
      token: alice.token,
      body: { items: [article({ sku: 'dup-b' }), article({ sku: 'dup-b' })] },
    });
    expect(res.status).toBe(409);
    expect((await server.call('GET', '/api/v1/articles?limit=1', { token: admin.token })).body.data.totalCount).toBe(
      before,
    );
  });

  it('refuses more than 500 items and an empty list', async () => {
    const many = await server.call('POST', '/api/v1/articles/bulk', {
      token: alice.token,
      body: { items: Array.from({ length: 501 }, () => article()) },
    });
    expect(many.status).toBe(400);
    expect(many.body.error.details.items).toMatch(/at most 500/);
    expect(
      (await server.call('POST', '/api/v1/articles/bulk', { token: alice.token, body: { items: [] } })).status,
    ).toBe(400);
  });
});

describe('archive and restore', () => {
  it('moves a record out of lists and back', async () => {
    const { body } = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: article({ title: 'to-archive' }),
    });
    const id = body.data.id;
    const archived = await server.call('POST', `/api/v1/articles/${id}/archive`, { token: alice.token });
    expect(archived.status).toBe(200);
    expect(archived.body.data.archivedAt).toMatch(/Z$/);
    const listed = await server.call('GET', '/api/v1/articles?q=archive&limit=200', { token: alice.token });
    expect(listed.body.data.items.map((i: { id: string }) => i.id)).not.toContain(id);
    const withArchived = await server.call('GET', '/api/v1/articles?includeArchived=true&limit=200', {
      token: alice.token,
    });
    expect(withArchived.body.data.items.map((i: { id: string }) => i.id)).toContain(id);
    expect((await server.call('POST', `/api/v1/articles/${id}/archive`, { token: alice.token })).status).toBe(422);
    const restored = await server.call('POST', `/api/v1/articles/${id}/restore`, { token: alice.token });
    expect(restored.body.data.archivedAt).toBeNull();
  });
});

describe('envelopes and headers', () => {
  it('keeps a valid x-correlation-id and makes a UUID otherwise', async () => {
    const kept = await server.call('GET', '/api/v1/articles', { headers: { 'x-correlation-id': 'req-123.abc' } });
    expect(kept.headers.get('x-correlation-id')).toBe('req-123.abc');
    const replaced = await server.call('GET', '/api/v1/articles', { headers: { 'x-correlation-id': 'bad value!' } });
    expect(replaced.headers.get('x-correlation-id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const error = await server.call('GET', '/api/v1/unknown');
    expect(error.headers.get('x-correlation-id')).toBeTruthy();
    expect(error.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  it('answers a path that cannot be decoded with 404, never 500', async () => {
    for (const path of ['/api/v1/articles/%zz', '/api/v1/schema/metadata/%E0%A4%A', '/api/v1/articles/%zz/increment']) {
      const res = await server.call('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('refuses a tampered session token', async () => {
    const res = await server.call('GET', '/api/v1/articles', { token: `${alice.token.slice(0, -2)}xx` });
    expect(res.status).toBe(401);
  });
});

describe('metadata', () => {
  it('serves entity, type, fields and field metadata', async () => {
    const meta = await server.call('GET', '/api/v1/articles/metadata');
    expect(meta.body.data).toMatchObject({
      name: 'Article',
      plural: 'articles',
      base: 'content',
      ownership: 'owned',
      versioning: 'full',
      tenantScoped: false,
    });
    expect(meta.body.data.filters).toContain('kind');
    const type = await server.call('GET', '/api/v1/articles/metadata/type');
    expect(type.body.data.baseFields).toEqual(expect.arrayContaining(['id', 'ownerId', 'title', 'status']));
    const fields = await server.call('GET', '/api/v1/articles/metadata/fields');
    const level = fields.body.data.fields.find((f: { name: string }) => f.name === 'level');
    expect(level.values).toEqual([
      { key: 'intro', label: 'Introductory' },
      { key: 'advanced', label: 'Advanced' },
    ]);
    const kind = await server.call('GET', '/api/v1/articles/metadata/field/kind');
    expect(kind.body.data).toMatchObject({
      name: 'kind',
      type: 'enum',
      values: [
        { key: 'news', label: 'news' },
        { key: 'opinion', label: 'opinion' },
        { key: 'guide', label: 'guide' },
      ],
      filterable: true,
    });
    expect((await server.call('GET', '/api/v1/articles/metadata/field/nope')).status).toBe(404);
  });

  it('serves the schema overview, list and one entity by plural or name, without internal entities', async () => {
    const all = await server.call('GET', '/api/v1/schema/metadata');
    expect(all.body.data.entities.map((e: { plural: string }) => e.plural)).toContain('articles');
    expect(all.body.data.entities.map((e: { plural: string }) => e.plural)).not.toContain('users');
    const list = await server.call('GET', '/api/v1/schema/metadata/list');
    expect(list.body.data.items).toContainEqual({
      name: 'Project',
      plural: 'projects',
      label: 'Projects',
      origin: 'app',
    });
    expect((await server.call('GET', '/api/v1/schema/metadata/Article')).body.data.plural).toBe('articles');
    expect((await server.call('GET', '/api/v1/schema/metadata/articles')).body.data.fields.length).toBeGreaterThan(10);
    expect((await server.call('GET', '/api/v1/schema/metadata/users')).status).toBe(404);
  });

  it('names the field a record is known by, and the custom endpoints with their declared bodies', async () => {
    const orders = (await server.call('GET', '/api/v1/orders/metadata')).body.data;
    expect((await server.call('GET', '/api/v1/products/metadata')).body.data.displayField).toBe('name');
    expect((await server.call('GET', '/api/v1/articles/metadata')).body.data.displayField).toBe('title');
    const approve = orders.endpoints.find((e: { name: string }) => e.name === 'approve');
    expect(approve).toMatchObject({ method: 'POST', path: '/{id}/approve', action: 'approve', response: 'record' });
    expect(approve.body).toEqual([
      expect.objectContaining({
        name: 'note',
        type: 'string',
        required: true,
        constraints: { minLength: 1, maxLength: 500 },
      }),
    ]);
    expect(orders.endpoints.find((e: { name: string }) => e.name === 'summary')).toMatchObject({
      method: 'GET',
      path: '/summary',
      body: null,
      response: 'json',
    });
    expect((await server.call('GET', '/api/v1/comments/metadata')).body.data.endpoints).toEqual([]);
  });
});
