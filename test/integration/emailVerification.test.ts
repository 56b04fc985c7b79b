import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RuntimeConfig } from '../../runtime/config/runtimeConfig.js';
import { capturingLogger, LIMITS, mailConfig, resetCode, smtpServer, textOf } from '../support/smtp.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const close of closers.splice(0)) await close();
});

async function start(mode: RuntimeConfig['emailVerification'], limits = LIMITS) {
  const smtp = await smtpServer();
  closers.push(smtp.close);
  const log = capturingLogger();
  server = await startTestServer(
    {},
    { overrides: { rateLimit: limits, mail: mailConfig(smtp.port), emailVerification: mode }, logger: log.logger },
  );
  return { smtp, log, server };
}

const PASSWORD = 'correct horse battery staple!';
/** Registers; where verification is on the answer has no session, so the new user signs in with the password. */
async function register(email: string) {
  const registered = await server!.call('POST', '/api/v1/auth/register', {
    body: { email, password: PASSWORD, displayName: 'Verifier' },
  });
  if (registered.status !== 201 || registered.body.token) return registered;
  const login = await server!.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } });
  return { ...registered, body: { ...registered.body, token: login.body.token } };
}
const verify = (token: string) => server!.call('POST', '/api/v1/auth/verify-email', { body: { token } });
const mailsTo = (smtp: Awaited<ReturnType<typeof smtpServer>>, address: string) =>
  smtp.received.filter((mail) => mail.to.includes(address));

describe('email verification', () => {
  it('required: an unverified user signs in but is held at /auth until the mailed link is used, once', async () => {
    const { smtp, log } = await start('required');
    const registered = await register('new@example.test');
    expect(registered.status).toBe(201);
    expect(registered.body.user.emailVerified).toBe(false);
    const token = registered.body.token as string;
    await vi.waitFor(() => expect(mailsTo(smtp, 'new@example.test')).toHaveLength(1), { timeout: 5000 });
    const [mail] = smtp.received;
    expect(mail.raw).toMatch(/^Subject: Confirm your email address/m);
    const code = resetCode(mail.raw);
    expect(textOf(mail.raw)).toContain(`https://app.example.test/verify-email?token=${code}`);

    // Held: a distinct code everywhere but /auth.
    const held = await server!.call('GET', '/api/v1/articles', { token });
    expect(held.status).toBe(403);
    expect(held.body.error.code).toBe('EMAIL_NOT_VERIFIED');
    expect((await server!.call('GET', '/api/v1/projects', { token })).body.error.code).toBe('EMAIL_NOT_VERIFIED');
    const me = await server!.call('GET', '/api/v1/auth/me', { token });
    expect(me.status).toBe(200);
    expect(me.body.user.emailVerified).toBe(false);
    // A session sees its own user's change at once (the remembered caller is forgotten on the write).
    const confirmed = await verify(code);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.user).toMatchObject({ email: 'new@example.test', emailVerified: true });
    expect((await server!.call('GET', '/api/v1/articles', { token })).status).toBe(200);
    expect((await server!.call('GET', '/api/v1/auth/me', { token })).body.user.emailVerified).toBe(true);
    // Single use; garbage and missing tokens are refused alike.
    for (const again of [code, 'not-a-token', 'x'.repeat(43)]) {
      const refused = await verify(again);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.token).toMatch(/invalid, used or expired/);
    }
    expect((await server!.call('POST', '/api/v1/auth/verify-email', { body: {} })).status).toBe(400);
    // Stored hashed, never logged.
    expect(JSON.stringify(await server!.ctx.store.find('emailTokens', {}))).not.toContain(code);
    expect(log.text()).not.toContain(code);
    // Users made by an administrator are never held.
    const admin = await server!.user({ roles: ['ADMIN'] });
    expect((await server!.call('GET', '/api/v1/articles', { token: admin.token })).status).toBe(200);
  });

  it('answers a registration alike whether or not the address has an account, and tells its owner', async () => {
    const { smtp } = await start('required');
    const body = (email: string, password: string) => ({ email, password, displayName: 'Someone' });
    const first = await server!.call('POST', '/api/v1/auth/register', { body: body('taken@example.test', PASSWORD) });
    expect(first.status).toBe(201);
    const again = await server!.call('POST', '/api/v1/auth/register', {
      body: body('Taken@example.test', 'another long passphrase!'),
    });
    const fresh = await server!.call('POST', '/api/v1/auth/register', { body: body('fresh@example.test', PASSWORD) });
    for (const answer of [first, again, fresh]) {
      expect(answer.status).toBe(201);
      expect(Object.keys(answer.body)).toEqual(['user']);
      expect(Object.keys(answer.body.user).sort()).toEqual(['displayName', 'email', 'emailVerified', 'id']);
      expect(answer.headers.get('set-cookie')).toBeNull();
    }
    expect(again.body.user.id).not.toBe(first.body.user.id);
    // The owner of the taken address is told; the stranger's password opens nothing.
    await vi.waitFor(() => expect(mailsTo(smtp, 'taken@example.test')).toHaveLength(2), { timeout: 5000 });
    expect(mailsTo(smtp, 'taken@example.test').some((mail) => /Someone tried to use your/.test(mail.raw))).toBe(true);
    const stranger = await server!.call('POST', '/api/v1/auth/login', {
      body: { email: 'taken@example.test', password: 'another long passphrase!' },
    });
    expect(stranger.status).toBe(401);
    // A change of address to a taken one answers as any other, and its owner is told instead.
    const mover = await register('mover@example.test');
    const change = await server!.call('POST', '/api/v1/auth/change-email', {
      token: mover.body.token,
      body: { newEmail: 'fresh@example.test', currentPassword: PASSWORD },
    });
    expect(change.status).toBe(202);
    await vi.waitFor(() => expect(mailsTo(smtp, 'fresh@example.test')).toHaveLength(2), { timeout: 5000 });
    expect(mailsTo(smtp, 'fresh@example.test').at(-1)!.raw).toMatch(/move another account to it/);
  });

  it('optional: the link is sent and confirms, but nothing waits for it; off: nothing is sent', async () => {
    const { smtp } = await start('optional');
    const registered = await register('relaxed@example.test');
    expect(registered.body.user.emailVerified).toBe(false);
    expect((await server!.call('GET', '/api/v1/articles', { token: registered.body.token })).status).toBe(200);
    await vi.waitFor(() => expect(smtp.received).toHaveLength(1), { timeout: 5000 });
    expect((await verify(resetCode(smtp.received[0].raw))).body.user.emailVerified).toBe(true);
    await server!.close();

    const off = await start('off');
    const plain = await register('plain@example.test');
    // Nobody proved the address: nothing is sent and nothing waits, but it counts as unproven.
    expect(plain.body.user.emailVerified).toBe(false);
    expect((await server!.call('GET', '/api/v1/articles', { token: plain.body.token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(off.smtp.received).toHaveLength(0);
  });

  it('resends a link for an unconfirmed address only, the same answer for every address, once a minute', async () => {
    const { smtp } = await start('required');
    await register('again@example.test');
    await vi.waitFor(() => expect(smtp.received).toHaveLength(1), { timeout: 5000 });
    const resend = (email: string) => server!.call('POST', '/api/v1/auth/resend-verification', { body: { email } });
    const known = await resend('again@example.test');
    const unknown = await resend('nobody@example.test');
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(known.body).toEqual(unknown.body);
    // Within a minute of the first link: no second mail (no mail bombing through resend).
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.received).toHaveLength(1);
    // A minute later a new link goes out and the older one ends.
    const first = resetCode(smtp.received[0].raw);
    const later = new Date(Date.now() + 61_000);
    server!.ctx.now = () => later;
    await resend('again@example.test');
    await vi.waitFor(() => expect(smtp.received).toHaveLength(2), { timeout: 5000 });
    expect((await verify(first)).status).toBe(400);
    expect((await verify(resetCode(smtp.received[1].raw))).status).toBe(200);
    // Confirmed: resend sends nothing more.
    server!.ctx.now = () => new Date(later.getTime() + 120_000);
    await resend('again@example.test');
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.received).toHaveLength(2);
  });

  it('changes the address only when the link sent to the new one is used, telling the old one', async () => {
    const { smtp } = await start('optional');
    const registered = await register('old@example.test');
    const token = registered.body.token as string;
    await vi.waitFor(() => expect(smtp.received).toHaveLength(1), { timeout: 5000 });
    const change = (body: Record<string, unknown>, credential = token) =>
      server!.call('POST', '/api/v1/auth/change-email', { token: credential, body });

    expect((await change({ newEmail: 'new@example.test', currentPassword: 'wrong password!!' })).status).toBe(400);
    expect(
      (await change({ newEmail: 'not an address', currentPassword: 'correct horse battery staple!' })).status,
    ).toBe(400);
    expect(
      (await change({ newEmail: 'old@example.test', currentPassword: 'correct horse battery staple!' })).status,
    ).toBe(400);
    expect(
      (
        await server!.call('POST', '/api/v1/auth/change-email', {
          body: { newEmail: 'a@b.test', currentPassword: 'x' },
        })
      ).status,
    ).toBe(401);
    const asked = await change({ newEmail: 'New@Example.test', currentPassword: 'correct horse battery staple!' });
    expect(asked.status).toBe(202);
    await vi.waitFor(() => expect(smtp.received).toHaveLength(3), { timeout: 5000 });
    const [confirmation] = mailsTo(smtp, 'new@example.test');
    const [, notice] = mailsTo(smtp, 'old@example.test');
    expect(confirmation.raw).toMatch(/^Subject: Confirm your new email address/m);
    expect(textOf(notice.raw)).toContain('new@example.test');
    expect(textOf(notice.raw)).not.toMatch(/asks for it/);
    // Nothing changed yet.
    expect((await server!.call('GET', '/api/v1/auth/me', { token })).body.user.email).toBe('old@example.test');
    const done = await verify(resetCode(confirmation.raw));
    expect(done.status).toBe(200);
    expect(done.body.user).toMatchObject({ email: 'new@example.test', emailVerified: true });
    expect((await server!.call('GET', '/api/v1/auth/me', { token })).body.user.email).toBe('new@example.test');
    const login = (email: string) =>
      server!.call('POST', '/api/v1/auth/login', { body: { email, password: 'correct horse battery staple!' } });
    expect((await login('new@example.test')).status).toBe(200);
    expect((await login('old@example.test')).status).toBe(401);
  });

  it('refuses a change whose new address was registered meanwhile (409), and limits every new route', async () => {
    const strict = { ...LIMITS, auth: { limit: 6, window: 60 } };
    const { smtp } = await start('optional', strict);
    const registered = await register('first@example.test');
    await server!.call('POST', '/api/v1/auth/change-email', {
      token: registered.body.token,
      body: { newEmail: 'second@example.test', currentPassword: 'correct horse battery staple!' },
    });
    await vi.waitFor(() => expect(mailsTo(smtp, 'second@example.test')).toHaveLength(1), { timeout: 5000 });
    await register('second@example.test');
    const taken = await verify(resetCode(mailsTo(smtp, 'second@example.test')[0].raw));
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('CONFLICT');
    // The auth tier counts per address: the new routes run out like the others.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await verify('nope')).status);
      statuses.push(
        (await server!.call('POST', '/api/v1/auth/resend-verification', { body: { email: 'x@example.test' } })).status,
      );
    }
    expect(statuses).toContain(429);
  });
});
