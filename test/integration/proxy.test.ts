import { request } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { checkResponse } from '../support/openApiCheck.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** node:http, so the Host header is the test's to choose (fetch sets its own). */
function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<RawAnswer> {
  const url = new URL(server!.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          const parsed = text ? JSON.parse(text) : undefined;
          const problems = checkResponse(method, path, res.statusCode!, res.headers['content-type'] ?? null, parsed);
          if (problems.length > 0)
            return reject(new Error(`does not match the OpenAPI document: ${problems.join('; ')}`));
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const PASSWORD = 'correct horse battery';
const register = (email: string, headers: Record<string, string>) =>
  send('POST', '/api/v1/auth/register', headers, { email, password: PASSWORD, displayName: 'Proxy' });
const sessionCookie = (answer: RawAnswer) => (answer.headers['set-cookie'] as string[] | undefined)?.[0] ?? '';

describe('the session cookie', () => {
  it('is Secure on loopback and over HTTPS, not over plain HTTP to another host (auto)', async () => {
    server = await startTestServer({ TRUST_PROXY: 'loopback' });
    const loopback = await register('loop@example.test', {});
    expect(sessionCookie(loopback)).toMatch(/; Secure/);
    expect(loopback.body.cookieWarning).toBeUndefined();

    const intranet = await register('intranet@example.test', { host: 'app.intranet.test' });
    expect(intranet.status).toBe(201);
    expect(sessionCookie(intranet)).toMatch(/HttpOnly/);
    expect(sessionCookie(intranet)).not.toMatch(/Secure/);
    expect(intranet.body.cookieWarning).toBeUndefined();
    // The cookie is kept, so the browser is signed in.
    const token = /_uid=([^;]+)/.exec(sessionCookie(intranet))![1];
    const me = await send('GET', '/api/v1/auth/me', { host: 'app.intranet.test', cookie: `entigen_uid=${token}` });
    expect(me.body.user.email).toBe('intranet@example.test');

    // TLS ended at a trusted proxy: Secure again.
    const proxied = await register('tls@example.test', {
      host: 'app.example.test',
      'x-forwarded-proto': 'https',
    });
    expect(sessionCookie(proxied)).toMatch(/; Secure/);
    expect(proxied.body.cookieWarning).toBeUndefined();
  });

  it('believes X-Forwarded-Proto only from a trusted proxy', async () => {
    server = await startTestServer();
    const forged = await register('forged@example.test', {
      host: 'app.example.test',
      'x-forwarded-proto': 'https',
    });
    expect(sessionCookie(forged)).not.toMatch(/Secure/);
  });

  it('always: Secure everywhere, and a sign-in over plain HTTP is told the browser will not keep it', async () => {
    server = await startTestServer({ COOKIE_SECURE: 'always' });
    const plain = await register('always@example.test', { host: 'app.intranet.test' });
    expect(sessionCookie(plain)).toMatch(/; Secure/);
    expect(plain.body.cookieWarning).toMatch(/plain HTTP.*server\.cookies\.secure/);
    const login = await send(
      'POST',
      '/api/v1/auth/login',
      { host: 'app.intranet.test' },
      { email: 'always@example.test', password: PASSWORD },
    );
    expect(login.status).toBe(200);
    expect(login.body.cookieWarning).toMatch(/will not keep it/);
    // The token in the answer still works.
    const me = await send('GET', '/api/v1/auth/me', {
      host: 'app.intranet.test',
      authorization: `Bearer ${login.body.token}`,
    });
    expect(me.status).toBe(200);
    expect((await register('always2@example.test', {})).body.cookieWarning).toBeUndefined();
  });

  it('an https public URL makes it Secure, and says so to a plain-HTTP sign-in', async () => {
    server = await startTestServer({ PUBLIC_URL: 'https://app.example.test' });
    const plain = await register('public@example.test', { host: 'app.example.test' });
    expect(sessionCookie(plain)).toMatch(/; Secure/);
    expect(plain.body.cookieWarning).toMatch(/public URL is https.*server\.trustProxy/);
  });

  it('never: no Secure even over HTTPS', async () => {
    server = await startTestServer({ COOKIE_SECURE: 'never', TRUST_PROXY: '1' });
    const answer = await register('never@example.test', { 'x-forwarded-proto': 'https' });
    expect(sessionCookie(answer)).not.toMatch(/Secure/);
    const logout = await send('POST', '/api/v1/auth/logout', { authorization: `Bearer ${answer.body.token}` });
    expect(sessionCookie(logout)).toMatch(/^entigen_uid=;/);
    expect(sessionCookie(logout)).not.toMatch(/Secure/);
  });
});

describe('the client address behind a proxy', () => {
  const logged = () => {
    const lines: any[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    return { lines, logger: pino({ level: 'info' }, sink) };
  };

  it('comes from X-Forwarded-For through trusted hops: logs, rate limits and audit', async () => {
    const { lines, logger } = logged();
    server = await startTestServer(
      { TRUST_PROXY: '1' },
      { logger, overrides: { rateLimit: { ...GENEROUS_LIMITS, auth: { limit: 2, window: 60 } } } },
    );
    const login = (address: string) =>
      send(
        'POST',
        '/api/v1/auth/login',
        // The leftmost entry is the client's own claim; the trusted hop appended the real one.
        { 'x-forwarded-for': `6.6.6.6, ${address}` },
        { email: 'nobody@example.test', password: 'wrong password!' },
      );
    expect((await login('203.0.113.7')).status).toBe(401);
    expect((await login('203.0.113.7')).status).toBe(401);
    expect((await login('203.0.113.7')).status).toBe(429);
    // Another client behind the same proxy has its own budget.
    expect((await login('198.51.100.4')).status).toBe(401);
    // An IPv6 client holds a whole /64: a new address in it is the same client.
    expect((await login('2001:db8:7:7::1')).status).toBe(401);
    expect((await login('2001:db8:7:7::2')).status).toBe(401);
    expect((await login('2001:db8:7:7:ffff::3')).status).toBe(429);
    expect((await login('2001:db8:7:8::1')).status).toBe(401);
    const requests = lines.filter((line) => line.msg === 'request' && line.path === '/api/v1/auth/login');
    expect(requests.map((line) => line.clientAddress)).toEqual([
      '203.0.113.7',
      '203.0.113.7',
      '203.0.113.7',
      '198.51.100.4',
      '2001:db8:7:7::1',
      '2001:db8:7:7::2',
      '2001:db8:7:7:ffff::3',
      '2001:db8:7:8::1',
    ]);

    const owner = await server.user();
    const admin = await server.user({ roles: ['ADMIN'] });
    const created = await send(
      'POST',
      '/api/v1/articles',
      { authorization: `Bearer ${owner.token}`, 'x-forwarded-for': '192.0.2.44' },
      { title: 'From afar', body: 'b' },
    );
    expect(created.status).toBe(201);
    const history = (token: string) =>
      send('GET', `/api/v1/articles/${created.body.data.id}/versions`, { authorization: `Bearer ${token}` });
    // Administrators see where a change came from; other readers do not.
    expect((await history(admin.token)).body.items[0].changedFrom).toBe('192.0.2.44');
    const own = await history(owner.token);
    expect(own.status).toBe(200);
    expect(own.body.items[0]).not.toHaveProperty('changedFrom');
  });

  it('is the socket address when no proxy is trusted, whatever X-Forwarded-For says', async () => {
    const { lines, logger } = logged();
    server = await startTestServer({}, { logger });
    await send('GET', '/api/v1/auth/me', { 'x-forwarded-for': '203.0.113.9' });
    const line = lines.find((entry) => entry.msg === 'request' && entry.path === '/api/v1/auth/me');
    expect(line.clientAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });
});
