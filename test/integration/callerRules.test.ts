import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openSse, type SseStream } from '../support/sse.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

/**
 * Permissions whose value is the caller's own: `articles:view:author:{{user.id}}` holds for the
 * articles whose author is the caller, on every read path and for creates and edits.
 */
describe('rules relative to the caller: {{user.id}} and {{user.email}}', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let alice: { id: string; token: string };
  let bob: { id: string; token: string };
  const streams: SseStream[] = [];
  const ids = new Map<string, string>();

  beforeAll(async () => {
    server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS } });
    admin = (await server.user({ roles: ['ADMIN'] })) as { id: string; token: string };
    const role = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: {
        key: 'WRITER',
        label: 'Writer',
        description: 'Works on the articles they author, and on those tagged with their address',
        permissions: [
          'articles:view:author:{{user.id}}',
          'articles:edit:author:{{user.id}}',
          'articles:create:author:{{user.id}}',
          'articles:view:tags:{{user.email}}',
        ],
      },
    });
    expect(role.status).toBe(201);
    alice = (await server.user({ roles: ['WRITER'], email: 'alice@example.test' })) as { id: string; token: string };
    bob = (await server.user({ roles: ['WRITER'], email: 'bob@example.test' })) as { id: string; token: string };
    const make = async (name: string, values: Record<string, unknown>) => {
      const made = await server.call('POST', '/api/v1/articles', {
        token: admin.token,
        body: { title: name, body: `text of ${name}`, ...values },
      });
      expect(made.status).toBe(201);
      ids.set(name, made.body.data.id);
    };
    await make('alice-1', { author: alice.id, views: 3 });
    await make('alice-2', { author: alice.id, views: 4 });
    await make('bob-1', { author: bob.id, views: 10 });
    await make('tagged-for-alice', { author: bob.id, tags: ['alice@example.test', 'misc'], views: 1 });
    await make('nobody', { views: 100 });
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(() => server.close());

  const as = (who: { token: string }) => (method: string, path: string, body?: unknown) =>
    server.call(method, path, { token: who.token, body });
  const titles = (items: { title: string }[]) => items.map((a) => a.title).sort();

  it('matches {{user.email}} only for an address someone proved', async () => {
    // A stranger registers alice's address's twin on the public form: nobody proved it.
    const tagged = await server.call('POST', '/api/v1/articles', {
      token: admin.token,
      body: { title: 'tagged-for-carol', body: 'text', tags: ['carol@example.test'] },
    });
    expect(tagged.status).toBe(201);
    const registered = await server.call('POST', '/api/v1/auth/register', {
      body: { email: 'carol@example.test', password: 'a long passphrase 7!', displayName: 'Carol?' },
    });
    expect(registered.status).toBe(201);
    expect(registered.body.user.emailVerified).toBe(false);
    expect(
      (
        await server.call('PUT', `/api/v1/users/${registered.body.user.id}`, {
          token: admin.token,
          body: { roles: ['WRITER'] },
        })
      ).status,
    ).toBe(200);
    const stranger = { token: registered.body.token as string };
    const seen = async () => titles((await as(stranger)('GET', '/api/v1/articles?limit=100')).body.data.items);
    expect(await seen()).toEqual([]);
    expect((await as(stranger)('GET', `/api/v1/articles/${tagged.body.data.id}`)).status).toBe(404);
    // Once the address is proven (here by the store, as a confirmation link does), the rule holds.
    await server.ctx.store.update('users', registered.body.user.id, { emailVerified: true });
    expect(await seen()).toEqual(['tagged-for-carol']);
  });

  it('lists, counts and gets only the records the caller’s values match', async () => {
    const list = await as(alice)('GET', '/api/v1/articles?limit=100');
    expect(list.status).toBe(200);
    expect(titles(list.body.data.items)).toEqual(['alice-1', 'alice-2', 'tagged-for-alice']);
    expect(list.body.data.totalCount).toBe(3);
    const bobs = await as(bob)('GET', '/api/v1/articles?limit=100');
    expect(titles(bobs.body.data.items)).toEqual(['bob-1', 'tagged-for-alice']);
    expect((await as(alice)('GET', `/api/v1/articles/${ids.get('alice-1')}`)).status).toBe(200);
    expect((await as(alice)('GET', `/api/v1/articles/${ids.get('bob-1')}`)).status).toBe(404);
    expect((await as(alice)('GET', `/api/v1/articles/${ids.get('nobody')}`)).status).toBe(404);
  });

  it('aggregates and searches over the same records', async () => {
    const sums = await as(alice)('GET', '/api/v1/articles/aggregate?sum=views');
    expect(sums.status).toBe(200);
    expect(sums.body.data.groups[0]).toMatchObject({ count: 3, sum: { views: 8 } });
    const found = await as(alice)('GET', '/api/v1/search?q=text');
    expect(found.status).toBe(200);
    const articleHits = found.body.data.items.filter((hit: { entity: string }) => hit.entity === 'articles');
    expect(articleHits.map((hit: { id: string }) => hit.id).sort()).toEqual(
      [ids.get('alice-1'), ids.get('alice-2'), ids.get('tagged-for-alice')].sort(),
    );
  });

  it('edits only matching records; a view through another rule does not make a record editable', async () => {
    expect((await as(alice)('PATCH', `/api/v1/articles/${ids.get('alice-1')}`, { views: 5 })).status).toBe(200);
    // Visible by its tag, but not authored by Alice: viewable, not editable.
    expect((await as(alice)('PATCH', `/api/v1/articles/${ids.get('tagged-for-alice')}`, { views: 5 })).status).toBe(
      403,
    );
    expect((await as(alice)('PATCH', `/api/v1/articles/${ids.get('bob-1')}`, { views: 5 })).status).toBe(404);
  });

  it('creates only records the rule holds for', async () => {
    const own = await as(alice)('POST', '/api/v1/articles', { title: 'mine', body: 'b', author: alice.id });
    expect(own.status).toBe(201);
    const forBob = await as(alice)('POST', '/api/v1/articles', { title: 'his', body: 'b', author: bob.id });
    expect(forBob.status).toBe(403);
    expect(forBob.body.error.code).toBe('FORBIDDEN');
    const bulk = await as(alice)('POST', '/api/v1/articles/bulk', {
      items: [
        { title: 'ok', body: 'b', author: alice.id },
        { title: 'not ok', body: 'b' },
      ],
    });
    expect(bulk.status).toBe(403);
    expect(bulk.body.error.details).toEqual({ 'items.1': expect.stringContaining('You may not create') });
    const after = await as(admin)('GET', '/api/v1/articles?limit=100');
    expect(titles(after.body.data.items)).not.toContain('his');
    expect(titles(after.body.data.items)).not.toContain('ok');
  });

  it('streams to each caller exactly the events of records it may view', async () => {
    const aliceStream = await openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: alice.token });
    const bobStream = await openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: bob.token });
    streams.push(aliceStream, bobStream);
    const hers = await as(admin)('POST', '/api/v1/articles', { title: 'live', body: 'b', author: alice.id });
    const his = await as(admin)('POST', '/api/v1/articles', { title: 'live', body: 'b', author: bob.id });
    await aliceStream.next((e) => e.event === 'articles.created' && e.data.id === hers.body.data.id);
    await bobStream.next((e) => e.event === 'articles.created' && e.data.id === his.body.data.id);
    const seen = (stream: SseStream) => stream.events.map((e) => e.data?.id).filter(Boolean);
    expect(seen(aliceStream)).not.toContain(his.body.data.id);
    expect(seen(bobStream)).not.toContain(hers.body.data.id);
  });

  it('never holds for an anonymous caller, and refuses unknown or ill-typed values when a role is saved', async () => {
    const anonymous = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'ANONYMOUS', label: 'Anonymous', permissions: ['articles:view:author:{{user.id}}'] },
    });
    expect(anonymous.status).toBe(201);
    // Without a user the rule holds for nothing: the caller is told to sign in.
    expect((await server.call('GET', '/api/v1/articles?limit=100')).status).toBe(401);
    const hers = titles((await as(alice)('GET', '/api/v1/articles?limit=100')).body.data.items);
    expect(hers).toContain('alice-1');
    expect(hers).not.toContain('bob-1');
    for (const [permission, problem] of [
      ['articles:view:author:{{user.name}}', 'unknown value "{{user.name}}"'],
      ['articles:view:views:{{user.email}}', '{{user.email}} cannot match field "views" (int)'],
      ['articles:view:views:many', '"many" is not a value of field "views": must be an integer'],
      ['articles:view:kind:poems', 'must be one of news, opinion, guide'],
      ['articles:view:nothing:{{user.id}}', 'unknown field "nothing"'],
    ]) {
      const refused = await server.call('POST', '/api/v1/roles', {
        token: admin.token,
        body: { key: 'BROKEN', label: 'Broken', permissions: [permission] },
      });
      expect(refused.status, permission).toBe(400);
      expect(refused.body.error.details['permissions.0']).toContain(problem);
    }
  });
});
