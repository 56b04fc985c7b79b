import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../runtime/auth/apiKeyOperations.js';
import { callerForUser } from '../../runtime/auth/resolveCaller.js';
import { totpCode } from '../../runtime/auth/totp.js';
import { capturingLogger, LIMITS, mailConfig, smtpServer, textOf } from '../support/smtp.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const close of closers.splice(0)) await close();
});

const PASSWORD = 'correct horse battery staple!';
/** The server's clock, moved by the test: TOTP steps are 30 s. */
let clock = Date.parse('2026-11-24T10:00:05Z');

async function start(mfa: { requiredFor: string[] } = { requiredFor: [] }, limits = LIMITS) {
  const smtp = await smtpServer();
  closers.push(smtp.close);
  const log = capturingLogger();
  clock = Date.parse('2026-11-24T10:00:05Z');
  server = await startTestServer(
    {},
    {
      overrides: { rateLimit: limits, mail: mailConfig(smtp.port), mfa },
      logger: log.logger,
      now: () => new Date(clock),
    },
  );
  return { smtp, log };
}

const call = (method: string, path: string, options?: Parameters<TestServer['call']>[2]) =>
  server!.call(method, path, options);
const login = (email: string, password = PASSWORD) => call('POST', '/api/v1/auth/login', { body: { email, password } });

/** A registered user with two-factor authentication on: its secret, recovery codes and session. */
async function enrolledUser(email: string) {
  const registered = await call('POST', '/api/v1/auth/register', {
    body: { email, password: PASSWORD, displayName: 'Two Factor' },
  });
  const token = registered.body.token as string;
  const enrolled = await call('POST', '/api/v1/auth/mfa/enroll', { token, body: { currentPassword: PASSWORD } });
  expect(enrolled.status).toBe(200);
  const { secret } = enrolled.body;
  const confirmed = await call('POST', '/api/v1/auth/mfa/confirm', {
    token,
    body: { code: totpCode(secret, clock) },
  });
  expect(confirmed.status).toBe(200);
  return { secret: secret as string, recoveryCodes: confirmed.body.recoveryCodes as string[], token };
}

describe('two-factor authentication (TOTP)', () => {
  it('enrolls with an otpauth URI and QR code, then asks every password sign-in for a code', async () => {
    const { log } = await start();
    const registered = await call('POST', '/api/v1/auth/register', {
      body: { email: 'totp@example.test', password: PASSWORD, displayName: 'Totp' },
    });
    const token = registered.body.token as string;
    expect(registered.body.user.mfaEnabled).toBeUndefined();
    expect((await call('GET', '/api/v1/auth/me', { token })).body.user.mfaEnabled).toBe(false);

    // A fresh session enrolls as it is; a wrong password is refused; a session older than ten
    // minutes must give the password. The secret appears in each answer only.
    const fresh = await call('POST', '/api/v1/auth/mfa/enroll', { token });
    expect(fresh.status).toBe(200);
    expect(
      (await call('POST', '/api/v1/auth/mfa/enroll', { token, body: { currentPassword: 'wrong password!!' } })).status,
    ).toBe(400);
    clock += 11 * 60_000;
    expect((await call('POST', '/api/v1/auth/mfa/enroll', { token, body: {} })).body.error.details).toEqual({
      currentPassword: 'is required: this session is older than 10 minutes',
    });
    const enrolled = await call('POST', '/api/v1/auth/mfa/enroll', { token, body: { currentPassword: PASSWORD } });
    expect(enrolled.body.secret).not.toBe(fresh.body.secret);
    expect(enrolled.status).toBe(200);
    const { secret, otpauthUri, qrCode } = enrolled.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(otpauthUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/entigen:totp@example.test');
    expect(Object.fromEntries(uri.searchParams)).toMatchObject({
      secret,
      issuer: 'entigen',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
    expect(Buffer.from(qrCode.replace('data:image/svg+xml;base64,', ''), 'base64').toString()).toMatch(/^<svg/);
    // Not on until confirmed: a wrong code is refused, sign-in still needs only the password.
    expect((await call('POST', '/api/v1/auth/mfa/confirm', { token, body: { code: '000000' } })).status).toBe(400);
    expect((await login('totp@example.test')).status).toBe(200);
    const confirmed = await call('POST', '/api/v1/auth/mfa/confirm', {
      token,
      body: { code: totpCode(secret, clock) },
    });
    expect(confirmed.status).toBe(200);
    const { recoveryCodes } = confirmed.body;
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    expect((await call('GET', '/api/v1/auth/me', { token })).body.user.mfaEnabled).toBe(true);
    // Enrolled: no second enrollment until it is turned off.
    expect((await call('POST', '/api/v1/auth/mfa/enroll', { token, body: { currentPassword: PASSWORD } })).status).toBe(
      409,
    );

    // A password sign-in now answers the distinct second-step result: no session, no cookie.
    const first = await login('totp@example.test');
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ mfaRequired: true, methods: ['totp', 'recoveryCode'] });
    expect(first.body.token).toBeUndefined();
    expect(first.headers.get('set-cookie')).toBeNull();
    // The confirming code's step is spent: the same code cannot sign in.
    const replayedConfirm = await call('POST', '/api/v1/auth/mfa/verify', {
      body: { mfaToken: first.body.mfaToken, code: totpCode(secret, clock) },
    });
    expect(replayedConfirm.status).toBe(401);
    // The next step's code signs in, exactly as login does; and only once.
    clock += 30_000;
    const code = totpCode(secret, clock);
    const verified = await call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: first.body.mfaToken, code } });
    expect(verified.status).toBe(200);
    expect(verified.body.user.email).toBe('totp@example.test');
    expect(verified.headers.get('set-cookie')).toMatch(/_uid=.*HttpOnly/);
    expect((await call('GET', '/api/v1/articles', { token: verified.body.token })).status).toBe(200);
    const replay = await call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: first.body.mfaToken, code } });
    expect(replay.status).toBe(401);
    expect(replay.body.error.details.code).toMatch(/not a current authenticator code/);
    // One step of drift either way is accepted; two are not.
    const drift = await login('totp@example.test');
    expect(
      (
        await call('POST', '/api/v1/auth/mfa/verify', {
          body: { mfaToken: drift.body.mfaToken, code: totpCode(secret, clock + 60_000) },
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await call('POST', '/api/v1/auth/mfa/verify', {
          body: { mfaToken: drift.body.mfaToken, code: totpCode(secret, clock + 30_000) },
        })
      ).status,
    ).toBe(200);

    // A challenge does not pass as a session, expires, and a forged one is refused.
    expect((await call('GET', '/api/v1/auth/me', { token: drift.body.mfaToken })).status).toBe(401);
    const late = await login('totp@example.test');
    clock += 5 * 60_000 + 1000;
    expect(
      (
        await call('POST', '/api/v1/auth/mfa/verify', {
          body: { mfaToken: late.body.mfaToken, code: totpCode(secret, clock) },
        })
      ).status,
    ).toBe(401);
    const forged = late.body.mfaToken.replace(/\.\d+\./, `.${clock}.`);
    expect(
      (await call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: forged, code: totpCode(secret, clock) } }))
        .status,
    ).toBe(401);

    // Nor any later answer about the user: /auth/me, the admin's user list.
    const admin = await server!.user({ roles: ['ADMIN'] });
    const later = JSON.stringify([
      (await call('GET', '/api/v1/auth/me', { token })).body,
      (await call('GET', '/api/v1/users', { token: admin.token })).body,
    ]);
    for (const secretText of [secret, ...recoveryCodes]) expect(later).not.toContain(secretText);
    expect(later).not.toMatch(/mfaSecret|mfaRecoveryCodes|mfaLastStep/);
    // No secret, recovery code or challenge reaches the log or the stored user.
    const stored = JSON.stringify(await server!.ctx.store.find('users', {}));
    for (const secretText of [secret, ...recoveryCodes, first.body.mfaToken]) {
      expect(log.text()).not.toContain(secretText);
      expect(stored).not.toContain(secretText);
    }
    expect(stored).not.toContain(recoveryCodes[0].replace('-', ''));
  });

  it('recovery codes work once each, and wrong codes lock the second step for a while', async () => {
    await start();
    const { secret, recoveryCodes } = await enrolledUser('recover@example.test');
    const challenge = async () => (await login('recover@example.test')).body.mfaToken as string;
    const verify = async (code: string) =>
      call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: await challenge(), code } });
    // Upper case and without the dash is the same code.
    expect((await verify(recoveryCodes[0].toUpperCase().replace('-', ''))).status).toBe(200);
    expect((await verify(recoveryCodes[0])).status).toBe(401);
    // Two different codes at once: both work, neither puts the other back.
    const both = await Promise.all([verify(recoveryCodes[1]), verify(recoveryCodes[2])]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    for (const used of recoveryCodes.slice(0, 3)) expect((await verify(used)).status).toBe(401);
    expect((await verify(recoveryCodes[3])).status).toBe(200);
    // Also as `recoveryCode`; a code given as a JSON number counts as its six digits; not both fields.
    const as = async (body: Record<string, unknown>) =>
      call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: await challenge(), ...body } });
    expect((await as({ recoveryCode: recoveryCodes[4] })).status).toBe(200);
    expect((await as({ code: recoveryCodes[5], recoveryCode: recoveryCodes[6] })).status).toBe(400);
    expect((await as({})).status).toBe(400);
    clock += 30_000;
    expect((await as({ code: Number(totpCode(secret, clock)) })).status).toBe(200);

    // Five wrong codes in a row: 429 with Retry-After, even for a right code, until the lock ends.
    for (let i = 0; i < 5; i++) expect((await verify('999999')).status).toBe(401);
    const locked = await verify(totpCode(secret, clock + 30_000));
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('RATE_LIMITED');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    clock += 15 * 60_000 + 1000;
    expect((await verify(totpCode(secret, clock))).status).toBe(200);
  });

  it('checks at most five codes of a burst of wrong ones sent at once, then locks', async () => {
    await start();
    const { secret } = await enrolledUser('burst@example.test');
    const mfaToken = (await login('burst@example.test')).body.mfaToken as string;
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken, code: String(100000 + i) } }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(295);
    // Locked afterwards, even for a right code.
    clock += 30_000;
    const after = await call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken, code: totpCode(secret, clock) } });
    expect(after.status).toBe(429);
    expect(Number(after.headers.get('retry-after'))).toBeGreaterThan(800);
    clock += 15 * 60_000;
    const fresh = (await login('burst@example.test')).body.mfaToken as string;
    expect(
      (await call('POST', '/api/v1/auth/mfa/verify', { body: { mfaToken: fresh, code: totpCode(secret, clock) } }))
        .status,
    ).toBe(200);
  });

  it('requiredFor holds a role until it enrolls; API keys are not held; an admin reset mails the user', async () => {
    const { smtp } = await start({ requiredFor: ['ADMIN'] });
    const admin = await server!.user({ roles: ['ADMIN'], email: 'boss@example.test' });
    const held = await call('GET', '/api/v1/articles', { token: admin.token });
    expect(held.status).toBe(403);
    expect(held.body.error.code).toBe('MFA_ENROLLMENT_REQUIRED');
    expect((await call('GET', '/api/v1/users', { token: admin.token })).body.error.code).toBe(
      'MFA_ENROLLMENT_REQUIRED',
    );
    const me = await call('GET', '/api/v1/auth/me', { token: admin.token });
    expect(me.status).toBe(200);
    expect(me.body.mfaEnrollmentRequired).toBe(true);
    // Users of other roles are not held.
    const plain = await server!.user();
    expect((await call('GET', '/api/v1/articles', { token: plain.token })).status).toBe(200);
    // Enrolling (an account without a password needs none) releases the session.
    const enrolled = await call('POST', '/api/v1/auth/mfa/enroll', { token: admin.token });
    expect(enrolled.status).toBe(200);
    const confirmed = await call('POST', '/api/v1/auth/mfa/confirm', {
      token: admin.token,
      body: { code: totpCode(enrolled.body.secret, clock) },
    });
    expect(confirmed.status).toBe(200);
    expect((await call('GET', '/api/v1/articles', { token: admin.token })).status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token: admin.token })).body.mfaEnrollmentRequired).toBe(false);
    // A role that requires it cannot turn it off.
    clock += 30_000;
    const off = await call('POST', '/api/v1/auth/mfa/disable', {
      token: admin.token,
      body: { code: totpCode(enrolled.body.secret, clock) },
    });
    expect(off.status).toBe(422);

    // An API key of an admin who never enrolled is not held (made here as they would have made it
    // before requiredFor was set), and cannot enroll its owner.
    const other = await server!.user({ roles: ['ADMIN'], email: 'keys@example.test' });
    const owner = await server!.ctx.store.get('users', other.id);
    const key = await createApiKey(server!.auth, await callerForUser(owner!, server!.auth.roles), {
      name: 'ci',
      permissions: ['system:admin'],
      expiresAt: '2030-01-01T00:00:00Z',
    });
    expect((await call('GET', '/api/v1/articles', { token: other.token })).status).toBe(403);
    expect((await call('GET', '/api/v1/articles', { token: key.token })).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/mfa/enroll', { token: key.token })).status).toBe(403);

    // A user with MFA on loses it by an admin's reset, and is told by mail.
    const { token: userToken } = await enrolledUser('lost-phone@example.test');
    const [user] = await server!.ctx.store.find('users', {
      where: { field: 'email', op: 'eq', value: 'lost-phone@example.test' },
    });
    expect((await call('POST', `/api/v1/users/${user.id}/mfa/reset`, { token: plain.token })).status).toBe(403);
    expect((await call('POST', `/api/v1/users/${'f'.repeat(24)}/mfa/reset`, { token: admin.token })).status).toBe(404);
    const reset = await call('POST', `/api/v1/users/${user.id}/mfa/reset`, { token: admin.token });
    expect(reset.status).toBe(200);
    expect(reset.body.mfaEnabled).toBe(false);
    await vi.waitFor(
      () => expect(smtp.received.filter((mail) => mail.to.includes('lost-phone@example.test'))).toHaveLength(1),
      { timeout: 5000 },
    );
    const notice = smtp.received.find((mail) => mail.to.includes('lost-phone@example.test'))!;
    expect(notice.raw).toMatch(/^Subject: Two-factor authentication was turned off/m);
    expect(textOf(notice.raw)).toContain('reset the two-factor authentication');
    expect((await login('lost-phone@example.test')).status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token: userToken })).body.user.mfaEnabled).toBe(false);
  });

  it('turns off with a code, and limits every new route', async () => {
    await start(undefined, { ...LIMITS, auth: { limit: 8, window: 60 } });
    const { secret, token } = await enrolledUser('off@example.test');
    clock += 30_000;
    expect((await call('POST', '/api/v1/auth/mfa/disable', { token, body: { code: '000000' } })).status).toBe(401);
    const off = await call('POST', '/api/v1/auth/mfa/disable', { token, body: { code: totpCode(secret, clock) } });
    expect(off.status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token })).body.user.mfaEnabled).toBe(false);
    // Every new route counts in the auth tier (per address): each one runs out.
    const routes: [string, string, Record<string, unknown>?][] = [
      ['POST', '/api/v1/auth/mfa/verify', { mfaToken: 'x', code: '1' }],
      ['POST', '/api/v1/auth/mfa/confirm', { code: '1' }],
      ['POST', '/api/v1/auth/mfa/enroll', {}],
      ['POST', '/api/v1/auth/mfa/disable', { code: '1' }],
      ['GET', '/api/v1/auth/oidc/none/start'],
      ['GET', '/api/v1/auth/oidc/none/callback'],
      ['GET', '/api/v1/auth/oidc'],
      ['POST', '/api/v1/auth/test-mail', {}],
    ];
    for (const [method, path, body] of routes) {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await call(method, path, { token, body })).status);
      expect(statuses, `${method} ${path}`).toContain(429);
      clock += 61_000;
    }
  });
});
