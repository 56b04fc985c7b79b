import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const DEFAULT_LIMITS = {
  auth: { limit: 20, window: 60 },
  api: { limit: 100, window: 60 },
  public: { limit: 60, window: 60 },
};
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('rate limits over HTTP, with an injected clock', () => {
  it('counts auth requests per address with a sliding window and answers 429 with retry-after', async () => {
    let now = Date.UTC(2030, 0, 1, 12, 0, 50);
    server = await startTestServer({}, { overrides: { rateLimit: DEFAULT_LIMITS }, now: () => new Date(now) });
    const login = () =>
      server!.call('POST', '/api/v1/auth/login', { body: { email: 'x@example.test', password: 'nope nope nope!' } });
    const first = await login();
    expect(first.status).toBe(401);
    expect(first.headers.get('x-ratelimit-limit')).toBe('20');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('19');
    expect(first.headers.get('x-ratelimit-reset')).toBe('10');
    expect(first.headers.get('ratelimit-policy')).toBe('20;w=60');
    expect(first.headers.get('ratelimit')).toBe('limit=20, remaining=19, reset=10');
    for (let i = 0; i < 19; i++) await login();
    now += 15_000; // early in the next minute
    const next = await Promise.all(Array.from({ length: 20 }, () => login()));
    const limited = next.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(18);
    expect(limited[0].body).toEqual({ error: { code: 'RATE_LIMITED', message: 'Too many requests' } });
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('keys signed-in callers by user in the api tier and anonymous ones by address; health is exempt', async () => {
    server = await startTestServer(
      {},
      {
        overrides: {
          rateLimit: { ...DEFAULT_LIMITS, api: { limit: 3, window: 60 }, public: { limit: 2, window: 60 } },
        },
      },
    );
    const alice = await server.user();
    const bob = await server.user();
    const statuses = async (token?: string, n = 4) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push((await server!.call('GET', '/api/v1/articles', { token })).status);
      return out;
    };
    expect(await statuses(alice.token)).toEqual([200, 200, 200, 429]);
    expect(await statuses(bob.token)).toEqual([200, 200, 200, 429]);
    expect(await statuses(undefined, 3)).toEqual([200, 200, 429]);
    const health = await server.call('GET', '/api/health');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('idempotency', () => {
  it('runs 20 concurrent POSTs with one key once, and replays the answer', async () => {
    server = await startTestServer();
    const user = await server.user();
    const post = (body: object, key = 'order-42') =>
      server!.call('POST', '/api/v1/articles', { token: user.token, headers: { 'Idempotency-Key': key }, body });
    const results = await Promise.all(Array.from({ length: 20 }, () => post({ title: 'Once', body: 'b' })));
    const created = results.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') === null);
    expect(created).toHaveLength(1);
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const count = await server.call('GET', '/api/v1/articles?q=Once', { token: user.token });
    expect(count.body.data.totalCount).toBe(1);

    const replay = await post({ title: 'Once', body: 'b' });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(created[0].body);
    const other = await post({ title: 'Different', body: 'b' });
    expect(other.status).toBe(422);
    expect((await post({ title: 'x', body: 'b' }, 'k'.repeat(256))).status).toBe(400);
    // Another caller with the same key is another scope.
    const bob = await server.user();
    const theirs = await server.call('POST', '/api/v1/articles', {
      token: bob.token,
      headers: { 'Idempotency-Key': 'order-42' },
      body: { title: 'Bob', body: 'b' },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotency-replayed')).toBeNull();
  });

  it('keeps answers in the store: a replay after a restart still works; 4xx are kept, a key on register too', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'entigen-idem-')), 'i.db');
    server = await startTestServer({ DATABASE_URL: `sqlite:${db}` });
    const body = { email: 'idem@example.test', password: 'correct horse battery staple!', displayName: 'Idem' };
    const first = await server.call('POST', '/api/v1/auth/register', {
      headers: { 'Idempotency-Key': 'signup-1' },
      body,
    });
    expect(first.status).toBe(201);
    await server.close();
    server = await startTestServer({ DATABASE_URL: `sqlite:${db}` }, { withAdmin: false });
    const again = await server.call('POST', '/api/v1/auth/register', {
      headers: { 'Idempotency-Key': 'signup-1' },
      body,
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body.user).toEqual(first.body.user);
  });
});

describe('idempotency is per caller, and keeps no secret in clear', () => {
  const password = 'correct horse battery staple!';
  const records = async () => server!.ctx.store.find('idempotencyRecords', { limit: 1000 });

  it('replays to the same user whatever the credential (new session, cookie), compares bodies as JSON values', async () => {
    server = await startTestServer();
    const user = await server.user();
    const again = (
      await server.call('POST', '/api/v1/auth/register', {
        body: { email: 'twice@example.test', password, displayName: 'Twice' },
      })
    ).body;
    const second = await server.call('POST', '/api/v1/auth/login', { body: { email: 'twice@example.test', password } });
    const post = (headers: Record<string, string>, body: object = { title: 'Scoped', body: 'b' }) =>
      server!.call('POST', '/api/v1/articles', { headers: { 'Idempotency-Key': 'per-caller', ...headers }, body });

    const first = await post({ authorization: `Bearer ${again.token}` });
    expect(first.status).toBe(201);
    const viaNewSession = await post({ authorization: `Bearer ${second.body.token}` }, { body: 'b', title: 'Scoped' });
    expect(viaNewSession.headers.get('idempotency-replayed')).toBe('true');
    const viaCookie = await post({ cookie: `entigen_uid=${again.token}` });
    expect(viaCookie.headers.get('idempotency-replayed')).toBe('true');
    expect(viaCookie.body).toEqual(first.body);
    expect(await records()).toHaveLength(1);
    // Another user with the same key and body runs its own request.
    const other = await post({ authorization: `Bearer ${user.token}` });
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotency-replayed')).toBeNull();
    expect(other.body.data.id).not.toBe(first.body.data.id);
  });

  it('answers 409 to a duplicate that arrives while the first is still running', async () => {
    // A beforeCreate hook holds the first request for 600 ms, so the duplicate surely arrives while it runs
    // (racing two registrations against the password hash alone depended on the machine's load).
    server = await startTestServer(
      {},
      {
        registry: {
          ...registry,
          hooks: new Map([
            ...registry.hooks,
            ['articles', { beforeCreate: () => new Promise((r) => setTimeout(() => r(undefined), 600)) }],
          ]),
        },
      },
    );
    const admin = await server.user({ roles: ['ADMIN'] });
    const send = () =>
      server!.call('POST', '/api/v1/articles', {
        token: admin.token,
        headers: { 'Idempotency-Key': 'create-race' },
        body: { title: 'In flight', body: 'b' },
      });
    const first = send();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const [a, b] = await Promise.all([first, send()]);
    expect(a.status).toBe(201);
    if (server.ctx.store.kind === 'sqlite' && b.status === 201) {
      // SQLite has one connection: the duplicate's idempotency check waits for the first write's
      // transaction to commit; if the first answer was kept by then, it is replayed, else the
      // key is still in flight (409). Either way the write runs once.
      expect(b.headers.get('idempotency-replayed')).toBe('true');
    } else {
      expect(b.status).toBe(409);
      expect(b.body.error.message).toMatch(/still being processed/);
    }
    expect((await server.call('GET', '/api/v1/articles?q=flight', { token: admin.token })).body.data.totalCount).toBe(
      1,
    );
  });

  it('keeps answers holding a token sealed, replays them only to the same caller, never through a revoked session', async () => {
    server = await startTestServer();
    const user = await server.user();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const create = (token: string) =>
      server!.call('POST', '/api/v1/apikeys', {
        token,
        headers: { 'Idempotency-Key': 'key-1' },
        body: { name: 'ci', permissions: [], expiresAt },
      });
    const created = await create(user.token);
    expect(created.status).toBe(201);
    const replayed = await create(user.token);
    expect(replayed.headers.get('idempotency-replayed')).toBe('true');
    expect(replayed.body.data.token).toBe(created.body.data.token);
    expect(
      await server.ctx.store.find('apiKeys', { where: { field: 'ownerId', op: 'eq', value: user.id } }),
    ).toHaveLength(1);

    const registered = await server.call('POST', '/api/v1/auth/register', {
      headers: { 'Idempotency-Key': 'reg-1' },
      body: { email: 'sealed@example.test', password, displayName: 'S' },
    });
    const login = await server.call('POST', '/api/v1/auth/login', {
      headers: { 'Idempotency-Key': 'login-1' },
      body: { email: 'sealed@example.test', password },
    });
    const changed = await server.call('POST', '/api/v1/auth/change-password', {
      token: login.body.token,
      headers: { 'Idempotency-Key': 'pw-1' },
      body: { currentPassword: password, newPassword: 'another long passphrase!' },
    });
    expect(changed.status).toBe(200);
    const stored = JSON.stringify(await records());
    for (const secret of [created.body.data.token, registered.body.token, login.body.token, changed.body.token])
      expect(stored).not.toContain(secret);
    expect(stored).not.toContain('egk_');

    // The old session was revoked by the change: its replay is refused, the new token is never handed out.
    const replay = await server.call('POST', '/api/v1/auth/change-password', {
      token: login.body.token,
      headers: { 'Idempotency-Key': 'pw-1' },
      body: { currentPassword: password, newPassword: 'another long passphrase!' },
    });
    expect(replay.status).toBe(401);
    expect(JSON.stringify(replay.body)).not.toContain(changed.body.token);
  });
});

describe('limits, headers and errors', () => {
  it('answers 405 with Allow for a known path and an unsupported method', async () => {
    server = await startTestServer();
    const put = await server.call('PUT', '/api/v1/articles');
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(put.body.error.code).toBe('METHOD_NOT_ALLOWED');
    const id = '0'.repeat(24);
    expect((await server.call('POST', `/api/v1/articles/${id}`)).headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH');
    expect((await server.call('PUT', '/api/v1/nowhere')).status).toBe(404);
  });

  it('answers requests Node itself refuses (unknown method, oversized headers) with the envelope', async () => {
    server = await startTestServer();
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(server!.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(text));
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    const parse = (answer: string) => {
      const [head, body] = answer.split('\r\n\r\n');
      return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body: JSON.parse(body) };
    };
    const method = parse(await raw('FROBNICATE /api/v1/articles HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(method.status).toBe(400);
    expect(method.body).toEqual({ error: { code: 'VALIDATION_ERROR', message: 'Malformed HTTP request' } });
    expect(method.head).toMatch(/x-correlation-id: [0-9a-f-]{36}/);
    const big = await fetch(`${server.url}/api/v1/articles`, { headers: { 'x-big': 'a'.repeat(20_000) } });
    expect(big.status).toBe(431);
    expect(await big.json()).toEqual({
      error: { code: 'HEADERS_TOO_LARGE', message: 'Request headers are too large' },
    });
  });

  it('treats __proto__ and constructor like any other unknown name, in bodies and query strings', async () => {
    server = await startTestServer();
    const admin = await server.user({ roles: ['ADMIN'] });
    for (const key of ['__proto__', 'constructor']) {
      const created = await server.call('POST', '/api/v1/articles', {
        token: admin.token,
        body: `{"title":"t","body":"b","${key}":{"isAdmin":true}}`,
      });
      expect(created.status).toBe(400);
      expect(created.body.error.details).toEqual({ [key]: 'is not allowed' });
      const registered = await server.call('POST', '/api/v1/auth/register', {
        body: `{"email":"p${key}@example.test","password":"a long passphrase!","displayName":"P","${key}":{"roles":["ADMIN"]}}`,
      });
      expect(registered.status).toBe(400);
      expect(registered.body.error.details).toEqual({ [key]: 'is not allowed' });
    }
    for (const query of [
      '__proto__[x]=1',
      'constructor=1',
      'sort[toString]=1',
      'populate[__proto__]=x',
      'x.__proto__=1',
    ]) {
      const res = await server.call('GET', `/api/v1/articles?${query}`, { token: admin.token });
      expect(res.status, query).toBe(400);
      expect(Object.values(res.body.error.details), query).toEqual(['is not a known query parameter']);
    }
    const strength = await server.call('GET', '/api/v1/articles?sort[field]=title&sort[collation][strength]=9', {
      token: admin.token,
    });
    expect(strength.body.error.details).toMatchObject({ 'sort.collation.strength': 'must be 1, 2 or 3' });
  });

  it('refuses input no store can keep (NUL characters, lone surrogates, JSON nested too deep) with 400, on every store, storing nothing', async () => {
    server = await startTestServer();
    const admin = await server.user({ roles: ['ADMIN'] });
    const nul = 'must not contain the NUL character (U+0000)';
    const create = (body: unknown) => server!.call('POST', '/api/v1/articles', { token: admin.token, body });
    expect((await create({ title: 'a\u0000b', body: 'x' })).body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { title: nul },
    });
    expect((await create({ title: 'a', body: 'x', meta: { 'k\u0000': 1 } })).body.error.details).toEqual({ meta: nul });
    const deep = `{"title":"a","body":"x","extra":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    expect((await create(deep)).body.error.details).toEqual({ extra: 'is nested deeper than 64 levels' });
    expect((await create('{"title":"\\ud800","body":"x"}')).body.error.details).toEqual({
      title: 'must be well-formed Unicode (it holds a lone surrogate)',
    });
    expect((await server.call('DELETE', '/api/v1/roles/A%00', { token: admin.token })).body.error.details).toEqual({
      path: nul,
    });
    const bulk = await server.call('POST', '/api/v1/articles/bulk', {
      token: admin.token,
      body: {
        items: [
          { title: 'ok', body: 'x' },
          { title: '\u0000', body: 'x' },
        ],
      },
    });
    expect(bulk.status).toBe(400);
    for (const query of ['tags=%00', 'q=a%00', 'sort=%00title']) {
      const listed = await server.call('GET', `/api/v1/articles?${query}`, { token: admin.token });
      expect(listed.status).toBe(400);
      expect(Object.values(listed.body.error.details)).toEqual([nul]);
    }
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { authType: 'password', email: 'x\u0000@example.test', password: 'p' },
    });
    // Login only compares its body (the spec has LDAP escape a NUL in the name): no user has such an email.
    expect(login.status).toBe(401);
    expect(
      (await server.call('POST', '/api/v1/auth/forgot-password', { body: { email: 'x\u0000@example.test' } })).body
        .error.details,
    ).toEqual({ email: nul });
    expect((await server.call('GET', '/api/v1/articles', { token: admin.token })).body.data.totalCount).toBe(0);
  });

  it('routes one spelling of a path, the one every policy reads', async () => {
    server = await startTestServer({}, { overrides: { rateLimit: DEFAULT_LIMITS } });
    const credentials = { email: 'x@example.test', password: 'nope nope nope!' };
    // Other letter case is not a route: never counted in another tier, never missing no-store.
    for (const path of ['/api/v1/Auth/login', '/API/v1/auth/login', '/api/V1/auth/login', '/api/v1/AUTH/LOGIN']) {
      const res = await server.call('POST', path, { body: credentials });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const user = await server.user();
    expect((await server.call('GET', '/api/v1/Articles', { token: user.token })).status).toBe(404);
    expect((await server.call('GET', '/api/v1/auth/ME', { token: user.token })).status).toBe(404);
    // The trailing slash the routers accept is the same route to every policy.
    const slash = await server.call('POST', '/api/v1/auth/login/', { body: credentials });
    expect(slash.status).toBe(401);
    expect(slash.headers.get('x-ratelimit-limit')).toBe('20');
    expect(slash.headers.get('cache-control')).toBe('no-store');
    const post = (path: string) =>
      server!.call('POST', path, {
        token: user.token,
        headers: { 'Idempotency-Key': 'one-spelling' },
        body: { title: 'Spelled once', body: 'b' },
      });
    const first = await post('/api/v1/articles');
    const second = await post('/api/v1/articles/');
    expect(first.status).toBe(201);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.body.data.id).toBe(first.body.data.id);
    const listed = await server.call('GET', '/api/v1/articles?q=Spelled', { token: user.token });
    expect(listed.body.data.totalCount).toBe(1);
  });

  it('sends security headers and no-store on API responses', async () => {
    server = await startTestServer();
    const res = await server.call('GET', '/api/v1/articles');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});

describe('health', () => {
  it('is minimal for everyone and detailed for admins', async () => {
    server = await startTestServer();
    await server.call('GET', '/api/v1/articles');
    const anonymous = await server.call('GET', '/api/health');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({ status: 'ok', timestamp: expect.stringMatching(/Z$/) });
    const admin = await server.user({ roles: ['ADMIN'] });
    const full = await server.call('GET', '/api/health', { token: admin.token });
    expect(full.body).toMatchObject({
      status: 'ok',
      uptime: expect.any(Number),
      requests: { total: expect.any(Number), errors: expect.any(Number), errorRate: expect.any(Number) },
      memory: { rss: expect.any(Number), heapUsed: expect.any(Number) },
      database: { status: 'up', latencyMs: expect.any(Number), kind: server.ctx.store.kind },
      services: { database: { status: 'up' } },
      externalCalls: expect.any(Object),
    });
    expect(full.body.slowestEndpoints.length).toBeGreaterThan(0);
    const user = await server.user();
    expect(Object.keys((await server.call('GET', '/api/health', { token: user.token })).body)).toEqual([
      'status',
      'timestamp',
    ]);
  });

  it('answers 503 when the database is down, and so do requests that need it', async () => {
    server = await startTestServer();
    await server.ctx.store.close();
    const health = await server.call('GET', '/api/health');
    expect(health.status).toBe(503);
    expect(health.body.status).toBe('error');
    const list = await server.call('GET', '/api/v1/articles');
    expect(list.status).toBe(503);
    expect(list.body.error.code).toBe('SERVICE_UNAVAILABLE');
  });
});
