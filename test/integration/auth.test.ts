import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signSession } from '../../runtime/auth/sessionToken.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
const PASSWORD = 'correct horse battery staple!';

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function register(email: string, password = PASSWORD, displayName = 'Someone') {
  return server.call('POST', '/api/v1/auth/register', { body: { email, password, displayName } });
}

describe('register and login', () => {
  it('registers: 201 { user, token } and the session cookie', async () => {
    const res = await register('Ann@Example.test', PASSWORD, 'Ann');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: {
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        email: 'ann@example.test',
        displayName: 'Ann',
        // Nobody proved the address yet (verification is off by default).
        emailVerified: false,
      },
      token: expect.any(String),
    });
    expect(res.body.token).toMatch(/^[0-9a-f]{24}\.\d+\.[A-Za-z0-9_-]+$/);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^entigen_uid=[0-9a-f]{24}\.\d+\.[A-Za-z0-9_-]+;/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(JSON.stringify(res.body)).not.toMatch(/argon2|passwordHash/);
  });

  it('enforces the password policy and a unique email', async () => {
    const weak = await register('weak@example.test', 'short');
    expect(weak.status).toBe(400);
    expect(weak.body.error.details.password).toMatch(/at least 12/);
    const plain = await register('plain@example.test', 'abcdefghijklmnop');
    expect(plain.body.error.details.password).toMatch(/special/);
    const taken = await register('ANN@example.test');
    expect(taken.status).toBe(409);
    expect(taken.body.error.details).toEqual({ email: 'is already registered' });
    const bad = await server.call('POST', '/api/v1/auth/register', {
      body: { email: 'nope', password: PASSWORD, displayName: '', role: 'ADMIN' },
    });
    expect(bad.body.error.details).toMatchObject({ role: 'is not allowed', displayName: 'must not be empty' });
  });

  it('logs in with the same answer shape; unknown user and wrong password answer alike', async () => {
    const ok = await server.call('POST', '/api/v1/auth/login', {
      body: { authType: 'password', email: 'ann@example.test', password: PASSWORD },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.user.email).toBe('ann@example.test');
    const wrong = await server.call('POST', '/api/v1/auth/login', {
      body: { authType: 'password', email: 'ann@example.test', password: 'nope nope nope!' },
    });
    const unknown = await server.call('POST', '/api/v1/auth/login', {
      body: { authType: 'password', email: 'ghost@example.test', password: 'nope nope nope!' },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
  });

  it('accepts the session as a cookie and as a Bearer token; /auth/me shows user, roles, permissions', async () => {
    const { body, headers } = await server.call('POST', '/api/v1/auth/login', {
      body: { email: 'ann@example.test', password: PASSWORD },
    });
    const cookie = headers.get('set-cookie')!.split(';')[0];
    const viaCookie = await server.call('GET', '/api/v1/auth/me', { headers: { cookie } });
    const viaBearer = await server.call('GET', '/api/v1/auth/me', { token: body.token });
    expect(viaCookie.body).toEqual(viaBearer.body);
    expect(viaBearer.body).toMatchObject({ user: { email: 'ann@example.test' }, roles: ['USER'] });
    expect(viaBearer.body.permissions).toContain('articles:create');
    expect((await server.call('GET', '/api/v1/auth/me')).status).toBe(401);
  });
});

describe('session tokens', () => {
  it('rejects tampered, unsigned, foreign-secret and expired tokens', async () => {
    const { body } = await register('tokens@example.test');
    const [id, stamp] = body.token.split('.');
    const forged = [
      `${id}.${stamp}.${'A'.repeat(43)}`,
      `${id}.${stamp}`,
      id,
      signSession('another-secret', id, Date.now()),
      signSession('test-session-secret', id, Date.now() - 8 * 24 * 3600 * 1000),
    ];
    for (const token of forged)
      expect((await server.call('GET', '/api/v1/auth/me', { token })).status, token).toBe(401);
    // A bad cookie is ignored (anonymous), so a stale cookie never blocks signing in again.
    expect((await server.call('GET', '/api/v1/auth/me', { headers: { cookie: `entigen_uid=${id}` } })).status).toBe(
      401,
    );
    const login = await server.call('POST', '/api/v1/auth/login', {
      headers: { cookie: `entigen_uid=${id}.1.x` },
      body: { email: 'tokens@example.test', password: PASSWORD },
    });
    expect(login.status).toBe(200);
  });

  it('logout revokes that token only', async () => {
    const { body } = await register('logout@example.test');
    const other = await server.call('POST', '/api/v1/auth/login', {
      body: { email: 'logout@example.test', password: PASSWORD },
    });
    const out = await server.call('POST', '/api/v1/auth/logout', { token: body.token });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true });
    expect((await server.call('GET', '/api/v1/auth/me', { token: body.token })).status).toBe(401);
    expect((await server.call('GET', '/api/v1/auth/me', { token: other.body.token })).status).toBe(200);
    expect((await server.call('POST', '/api/v1/auth/logout')).status).toBe(401);
  });

  it('change-password checks the current password and revokes every earlier session', async () => {
    const { body } = await register('change@example.test');
    const wrong = await server.call('POST', '/api/v1/auth/change-password', {
      token: body.token,
      body: { currentPassword: 'wrong password!', newPassword: 'another good password!' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual({ currentPassword: 'is not correct' });
    await new Promise((r) => setTimeout(r, 5));
    const changed = await server.call('POST', '/api/v1/auth/change-password', {
      token: body.token,
      body: { currentPassword: PASSWORD, newPassword: 'another good password!' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ success: true, token: expect.any(String) });
    expect((await server.call('GET', '/api/v1/auth/me', { token: body.token })).status).toBe(401);
    expect((await server.call('GET', '/api/v1/auth/me', { token: changed.body.token })).status).toBe(200);
    expect(
      (
        await server.call('POST', '/api/v1/auth/login', {
          body: { email: 'change@example.test', password: 'another good password!' },
        })
      ).status,
    ).toBe(200);
  });
});

/** The reset code in the text of the password-reset mail (templates/mail/passwordReset.txt). */
const resetCode = (text: string) => /asks for it: (\S+)/.exec(text)![1];

describe('password reset', () => {
  it('issues a single-use token through the mailer and answers 202 for anyone', async () => {
    await register('reset@example.test');
    const sent: string[] = [];
    server.auth.mailer = { send: async (message) => void sent.push(message.text) };
    expect(
      (await server.call('POST', '/api/v1/auth/forgot-password', { body: { email: 'nobody@example.test' } })).status,
    ).toBe(202);
    expect(sent).toEqual([]);
    const res = await server.call('POST', '/api/v1/auth/forgot-password', { body: { email: 'reset@example.test' } });
    expect(res.status).toBe(202);
    // The mail is sent after the answer.
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    const token = resetCode(sent[0]);
    const stored = await server.ctx.store.find('passwordResets', {});
    expect(JSON.stringify(stored)).not.toContain(token);
    const done = await server.call('POST', '/api/v1/auth/reset-password', {
      body: { token, newPassword: 'a brand new password!' },
    });
    expect(done.status).toBe(200);
    expect(
      (
        await server.call('POST', '/api/v1/auth/reset-password', {
          body: { token, newPassword: 'yet another password!' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await server.call('POST', '/api/v1/auth/login', {
          body: { email: 'reset@example.test', password: 'a brand new password!' },
        })
      ).status,
    ).toBe(200);
  });
});

describe('password reset tokens', () => {
  const forgot = async (email: string, sent: string[]) => {
    const before = sent.length;
    await server.call('POST', '/api/v1/auth/forgot-password', { body: { email } });
    await vi.waitFor(() => expect(sent.length).toBe(before + 1));
    return resetCode(sent.at(-1)!);
  };
  const reset = (token: string, newPassword: string) =>
    server.call('POST', '/api/v1/auth/reset-password', { body: { token, newPassword } });

  it('die when a newer one is used and when the password changes', async () => {
    const { body } = await register('reset-tokens@example.test');
    const sent: string[] = [];
    server.auth.mailer = { send: async (message) => void sent.push(message.text) };
    const older = await forgot('reset-tokens@example.test', sent);
    const newer = await forgot('reset-tokens@example.test', sent);
    expect((await reset(newer, 'the newest password!')).status).toBe(200);
    expect((await reset(older, 'an attacker password!')).status).toBe(400);

    const pending = await forgot('reset-tokens@example.test', sent);
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { email: 'reset-tokens@example.test', password: 'the newest password!' },
    });
    const changed = await server.call('POST', '/api/v1/auth/change-password', {
      token: login.body.token,
      body: { currentPassword: 'the newest password!', newPassword: 'changed by the owner!' },
    });
    expect(changed.status).toBe(200);
    expect((await reset(pending, 'an attacker password!')).status).toBe(400);
    expect(body.user.email).toBe('reset-tokens@example.test');
  });

  it('prove the address: a reset on an account nobody had proved ends what its registrant set up', async () => {
    const { body } = await register('squatted@example.test');
    expect(body.user.emailVerified).toBe(false);
    const key = await server.call('POST', '/api/v1/apikeys', {
      token: body.token,
      body: { name: 'kept', permissions: ['account:edit'], expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    });
    expect(key.status).toBe(201);
    const sent: string[] = [];
    server.auth.mailer = { send: async (message) => void sent.push(message.text) };
    // The owner of the mailbox resets the password.
    expect((await reset(await forgot('squatted@example.test', sent), 'the owner password!')).status).toBe(200);
    expect((await server.call('GET', '/api/v1/auth/me', { token: body.token })).status).toBe(401);
    expect((await server.call('GET', '/api/v1/auth/me', { token: key.body.data.token })).status).toBe(401);
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { email: 'squatted@example.test', password: 'the owner password!' },
    });
    expect(login.status).toBe(200);
    expect(login.body.user.emailVerified).toBe(true);
  });

  it('answers forgot-password before any lookup or mail: the same work whether or not the account exists', async () => {
    await register('slowmail@example.test');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sent: string[] = [];
    server.auth.mailer = {
      send: async (message) => {
        await held;
        sent.push(message.to);
      },
    };
    const known = await server.call('POST', '/api/v1/auth/forgot-password', {
      body: { email: 'slowmail@example.test' },
    });
    const unknown = await server.call('POST', '/api/v1/auth/forgot-password', {
      body: { email: 'nobody-at-all@example.test' },
    });
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(known.body).toEqual(unknown.body);
    expect(sent).toEqual([]);
    release();
    await vi.waitFor(() => expect(sent).toEqual(['slowmail@example.test']));
  });
});

describe('users', () => {
  it('lists users for admins only, with cursor paging and no hashes', async () => {
    const admin = await server.user({ roles: ['ADMIN'] });
    const user = await server.user();
    expect((await server.call('GET', '/api/v1/users', { token: user.token })).status).toBe(403);
    expect((await server.call('GET', '/api/v1/users')).status).toBe(401);
    const first = await server.call('GET', '/api/v1/users?limit=2', { token: admin.token });
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(2);
    expect(first.body.nextCursor).toBeTruthy();
    const second = await server.call(
      'GET',
      `/api/v1/users?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      { token: admin.token },
    );
    expect(second.body.items[0].id > first.body.items[1].id).toBe(true);
    expect(JSON.stringify([first.body, second.body])).not.toMatch(/passwordHash|argon2/);
  });

  it('finds accounts by text in their email or name, and by ids, for admins only', async () => {
    const admin = await server.user({ roles: ['ADMIN'] });
    const zora = await server.user({ displayName: 'Zora Quill', email: 'zora.quill@example.test' });
    const yuri = await server.user({ displayName: 'Yuri Quill', email: 'yuri@example.test' });
    const users = (query: string, token = admin.token) => server.call('GET', `/api/v1/users?${query}`, { token });
    const emails = (res: { body: { items: { email: string }[] } }) => res.body.items.map((u) => u.email).sort();
    expect(emails(await users('q=quill'))).toEqual(['yuri@example.test', 'zora.quill@example.test']);
    expect(emails(await users('q=ZORA.Q'))).toEqual(['zora.quill@example.test']);
    expect(emails(await users(`id=${yuri.id},${zora.id}&limit=1`)).length).toBe(1);
    expect(emails(await users(`id=${yuri.id}&q=quill`))).toEqual(['yuri@example.test']);
    expect((await users('q=quill', zora.token)).status).toBe(403);
    const bad = await users('id=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.id).toMatch(/ids of 24 hexadecimal characters/);
    expect((await users(`q=${'x'.repeat(101)}`)).status).toBe(400);
  });

  it('lets users rename themselves but not change roles; admins assign roles', async () => {
    const admin = await server.user({ roles: ['ADMIN'] });
    const user = await server.user();
    const other = await server.user();
    const renamed = await server.call('PUT', `/api/v1/users/${user.id}`, {
      token: user.token,
      body: { displayName: 'New Name' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: user.id, displayName: 'New Name' });
    expect(
      (await server.call('PUT', `/api/v1/users/${user.id}`, { token: user.token, body: { roles: ['ADMIN'] } })).status,
    ).toBe(403);
    expect(
      (await server.call('PUT', `/api/v1/users/${other.id}`, { token: user.token, body: { displayName: 'x' } })).status,
    ).toBe(403);
    const promoted = await server.call('PUT', `/api/v1/users/${user.id}`, {
      token: admin.token,
      body: { roles: ['USER', 'MODERATOR'] },
    });
    expect(promoted.body.roles).toEqual(['USER', 'MODERATOR']);
    expect(
      (await server.call('PUT', `/api/v1/users/${user.id}`, { token: admin.token, body: { roles: ['NOPE'] } })).status,
    ).toBe(400);
    expect(
      (await server.call('PUT', `/api/v1/users/${user.id}`, { token: admin.token, body: { passwordHash: 'x' } }))
        .status,
    ).toBe(400);
  });
});
