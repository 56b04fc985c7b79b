import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../runtime/entities/prepareWrite.js';
import { startSlapd, type Slapd } from '../support/slapd.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let slapd: Slapd;
let server: TestServer;

beforeAll(async () => {
  slapd = await startSlapd();
  server = await startTestServer();
}, 180_000);
afterAll(async () => {
  await server?.close();
  slapd?.stop();
});

const ldapConfig = () => ({ url: slapd.url, baseDN: slapd.baseDN, userFilter: '(uid={username})' });
/** `config` null sends no ldapConfig, so the server's own settings apply. */
const login = (email: string, password: string, config: object | null = ldapConfig(), target = server) =>
  target.call('POST', '/api/v1/auth/login', { body: { authType: 'ldap', email, password, ...(config ? { ldapConfig: config } : {}) } });

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

  it.each(['*', 'a*', 'alice)(uid=*', '*)(|(uid=*', 'bob\\', 'adm\u0000'])('escapes filter metacharacters: %j matches nobody', async (name) => {
    const res = await login(name, 'alice-secret');
    expect(res.status).toBe(401);
  });

  it('takes settings from the request, then the stored setting, then the environment', async () => {
    const now = new Date().toISOString();
    await server.ctx.store.insert('settings', { id: newId(), key: 'ldap', value: { url: slapd.url, baseDN: slapd.baseDN }, createdAt: now, updatedAt: now });
    expect((await login('bob', 'bob-secret', null)).status).toBe(200);
    // The request wins over the stored setting.
    expect((await login('bob', 'bob-secret', { url: 'ldap://127.0.0.1:9', baseDN: slapd.baseDN })).status).toBe(503);

    const envServer = await startTestServer({ LDAP_URL: slapd.url, LDAP_BASE_DN: slapd.baseDN, LDAP_USER_FILTER: '(mail={username})' });
    try {
      expect((await login('bob@ldap.example.org', 'bob-secret', null, envServer)).status).toBe(200);
      expect((await login('bob', 'bob-secret', null, envServer)).status).toBe(401);
    } finally {
      await envServer.close();
    }
  });

  it('answers 503 when the server is unreachable and 422 when LDAP is not configured', async () => {
    expect((await login('alice', 'alice-secret', { url: 'ldap://127.0.0.1:9', baseDN: slapd.baseDN })).status).toBe(503);
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
