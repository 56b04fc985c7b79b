import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../runtime/write/prepareWrite.js';
import { type Slapd, startSlapd } from '../support/slapd.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const UNREACHABLE = 'ldap://127.0.0.1:9';
let slapd: Slapd;
let server: TestServer;

beforeAll(async () => {
  slapd = await startSlapd();
  // This server lets login requests name the test directory (and a closed port), as a configuration may.
  server = await startTestServer({ LDAP_ALLOWED_REQUEST_URLS: `${slapd.url},${UNREACHABLE}` });
}, 180_000);
afterAll(async () => {
  await server?.close();
  slapd?.stop();
});

const ldapConfig = () => ({ url: slapd.url, baseDN: slapd.baseDN, userFilter: '(uid={username})' });
/** `config` null sends no ldapConfig, so the server's own settings apply. */
const login = (email: string, password: string, config: object | null = ldapConfig(), target = server) =>
  target.call('POST', '/api/v1/auth/login', {
    body: { authType: 'ldap', email, password, ...(config ? { ldapConfig: config } : {}) },
  });

describe('LDAP login against a real slapd', () => {
  it('binds as the user; the first login creates the local user, later ones reuse it', async () => {
    const first = await login('alice', 'alice-secret');
    expect(first.status).toBe(200);
    expect(first.body.user).toMatchObject({ email: 'alice@ldap.example.org', displayName: 'Alice Liddell' });
    expect(first.headers.get('set-cookie')).toMatch(/^entigen_uid=/);
    const again = await login('alice', 'alice-secret');
    expect(again.body.user.id).toBe(first.body.user.id);
    const stored = await server.ctx.store.get('users', first.body.user.id);
    expect(stored).toMatchObject({ authSource: 'ldap', passwordHash: null });
    expect((await server.call('GET', '/api/v1/auth/me', { token: first.body.token })).status).toBe(200);
  });

  it('refuses a wrong or empty password (no unauthenticated bind)', async () => {
    expect((await login('bob', 'wrong')).status).toBe(401);
    expect((await login('bob', '')).status).toBe(401);
  });

  it.each(['*', 'a*', 'alice)(uid=*', '*)(|(uid=*', 'bob\\', 'adm\u0000'])(
    'escapes filter metacharacters: %j matches nobody',
    async (name) => {
      const res = await login(name, 'alice-secret');
      expect(res.status).toBe(401);
    },
  );

  it('takes settings from the request, then the stored setting, then the environment', async () => {
    const now = new Date().toISOString();
    await server.ctx.store.insert('settings', {
      id: newId(),
      key: 'ldap',
      value: { url: slapd.url, baseDN: slapd.baseDN },
      createdAt: now,
      updatedAt: now,
    });
    expect((await login('bob', 'bob-secret', null)).status).toBe(200);
    // The request wins over the stored setting.
    expect((await login('bob', 'bob-secret', { url: UNREACHABLE, baseDN: slapd.baseDN })).status).toBe(503);

    const envServer = await startTestServer({
      LDAP_URL: slapd.url,
      LDAP_BASE_DN: slapd.baseDN,
      LDAP_USER_FILTER: '(mail={username})',
    });
    try {
      expect((await login('bob@ldap.example.org', 'bob-secret', null, envServer)).status).toBe(200);
      expect((await login('bob', 'bob-secret', null, envServer)).status).toBe(401);
    } finally {
      await envServer.close();
    }
  });

  it('answers 503 when the server is unreachable and 422 when LDAP is not configured', async () => {
    expect((await login('alice', 'alice-secret', { url: UNREACHABLE, baseDN: slapd.baseDN })).status).toBe(503);
    const bare = await startTestServer();
    try {
      expect((await login('alice', 'alice-secret', null, bare)).status).toBe(422);
    } finally {
      await bare.close();
    }
  });

  it('tests the connection for admins only', async () => {
    const admin = await server.user({ roles: ['ADMIN'] });
    const user = await server.user();
    const res = await server.call('GET', '/api/v1/auth/test-ldap', { token: admin.token });
    expect(res.body).toMatchObject({ ok: true, url: slapd.url });
    expect((await server.call('GET', '/api/v1/auth/test-ldap', { token: user.token })).status).toBe(403);
  });
});

describe('an LDAP identity never reaches an account it does not own', () => {
  /** The caller's own directory: it holds an entry with the administrator's email and a password the caller chose. */
  let rogue: Slapd;
  beforeAll(async () => {
    rogue = await startSlapd([
      { uid: 'root', cn: 'Not Root', mail: 'root@example.test', password: 'i-control-this' },
      { uid: 'alice2', cn: 'Alice Twin', mail: 'alice@ldap.example.org', password: 'twin-secret' },
    ]);
  }, 120_000);
  afterAll(() => rogue?.stop());
  const rogueConfig = () => ({ url: rogue.url, baseDN: rogue.baseDN, userFilter: '(uid={username})' });

  it('refuses a request-supplied ldapConfig unless the configuration allows that server', async () => {
    const strict = await startTestServer();
    try {
      const res = await login('root', 'i-control-this', rogueConfig(), strict);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toHaveProperty('ldapConfig');
    } finally {
      await strict.close();
    }
    // Allowed servers are a list: another one, even on the same host, is refused.
    const res = await login('root', 'i-control-this', rogueConfig());
    expect(res.status).toBe(400);
    expect(res.body.error.details).toHaveProperty(['ldapConfig.url']);
  });

  it('does not sign in to a password account with the same email, the administrator included', async () => {
    const lax = await startTestServer({ LDAP_ALLOWED_REQUEST_URLS: rogue.url });
    try {
      const res = await login('root', 'i-control-this', rogueConfig(), lax);
      expect(res.status).toBe(409);
      expect(res.body).not.toHaveProperty('token');
      expect(res.headers.get('set-cookie')).toBeNull();
    } finally {
      await lax.close();
    }
  });

  it('does not sign in to an LDAP account linked to another entry', async () => {
    const both = await startTestServer({ LDAP_ALLOWED_REQUEST_URLS: `${slapd.url},${rogue.url}` });
    try {
      const real = await login('alice', 'alice-secret', ldapConfig(), both);
      expect(real.status).toBe(200);
      const twin = await login('alice2', 'twin-secret', rogueConfig(), both);
      expect(twin.status).toBe(409);
      expect((await login('alice', 'alice-secret', ldapConfig(), both)).body.user.id).toBe(real.body.user.id);
    } finally {
      await both.close();
    }
  });

  it('signs in to a password account only after an admin links it; the password then stops working', async () => {
    const env = await startTestServer({ LDAP_URL: slapd.url, LDAP_BASE_DN: slapd.baseDN });
    try {
      const admin = await env.user({ roles: ['ADMIN'] });
      const registered = await env.call('POST', '/api/v1/auth/register', {
        body: { email: 'bob@ldap.example.org', password: 'a long passphrase!', displayName: 'Bob' },
      });
      expect(registered.status).toBe(201);
      expect((await login('bob', 'bob-secret', null, env)).status).toBe(409);

      const put = (body: object, token = admin.token) =>
        env.call('PUT', `/api/v1/users/${registered.body.user.id}`, { token, body });
      expect((await put({ authSource: 'ldap' }, registered.body.token)).status).toBe(403);
      const linked = await put({ authSource: 'ldap' });
      expect(linked.body).toMatchObject({ authSource: 'ldap', ldapDn: null });
      const signedIn = await login('bob', 'bob-secret', null, env);
      expect(signedIn.status).toBe(200);
      expect(signedIn.body.user.id).toBe(registered.body.user.id);
      expect((await env.ctx.store.get('users', registered.body.user.id))?.ldapDn).toBe(
        `uid=bob,ou=people,${slapd.baseDN}`,
      );
      const password = await env.call('POST', '/api/v1/auth/login', {
        body: { email: 'bob@ldap.example.org', password: 'a long passphrase!' },
      });
      expect(password.status).toBe(401);
    } finally {
      await env.close();
    }
  });

  it('never tells the client socket details of an unreachable server', async () => {
    const res = await login('alice', 'alice-secret', { url: UNREACHABLE, baseDN: slapd.baseDN });
    expect(res.status).toBe(503);
    expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|:9\b/);
    const down = await startTestServer({ LDAP_URL: UNREACHABLE, LDAP_BASE_DN: slapd.baseDN });
    try {
      const admin = await down.user({ roles: ['ADMIN'] });
      const test = await down.call('GET', '/api/v1/auth/test-ldap', { token: admin.token });
      expect(test.body).toMatchObject({ ok: false, message: 'could not connect to the server' });
      expect(test.body.message).not.toMatch(/ECONNREFUSED/);
    } finally {
      await down.close();
    }
  });
});
