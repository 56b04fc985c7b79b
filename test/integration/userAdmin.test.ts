import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { capturingLogger, LIMITS, mailConfig, resetCode, smtpServer } from '../support/smtp.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

// Admins create accounts and send password resets: the token goes to the account's mailbox only.

let server: TestServer;
let smtp: Awaited<ReturnType<typeof smtpServer>>;
let log: ReturnType<typeof capturingLogger>;
let admin: { id: string; token: string };
let plain: { id: string; token: string };

beforeAll(async () => {
  smtp = await smtpServer();
  log = capturingLogger();
  server = await startTestServer(
    {},
    { overrides: { rateLimit: LIMITS, mail: mailConfig(smtp.port) }, logger: log.logger },
  );
  admin = await server.user({ roles: ['ADMIN'] });
  plain = await server.user();
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address));
const create = (body: unknown, token = admin.token) => server.call('POST', '/api/v1/users', { token, body });

describe('POST /users (admin)', () => {
  it('creates a local account without a password and mails its owner the link to set one', async () => {
    const made = await create({ email: 'New.Person@Example.test', displayName: 'New Person', roles: ['USER'] });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      email: 'new.person@example.test',
      displayName: 'New Person',
      roles: ['USER'],
      authSource: 'local',
      disabled: false,
    });
    expect(JSON.stringify(made.body)).not.toMatch(/password|token/i);
    await vi.waitFor(() => expect(mailsTo('new.person@example.test')).toHaveLength(1), { timeout: 5000 });
    const token = resetCode(mailsTo('new.person@example.test')[0].raw);
    // The token is nowhere but in the mail.
    expect(log.text()).not.toContain(token);
    const set = await server.call('POST', '/api/v1/auth/reset-password', {
      body: { token, newPassword: 'a fresh passphrase here!' },
    });
    expect(set.status).toBe(200);
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { authType: 'password', email: 'new.person@example.test', password: 'a fresh passphrase here!' },
    });
    expect(login.status).toBe(200);
  });

  it('takes a password the policy accepts, or an LDAP account without one', async () => {
    const weak = await create({ email: 'weak@example.test', displayName: 'Weak', password: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.body.error.details.password).toBeDefined();
    const strong = await create({
      email: 'strong@example.test',
      displayName: 'Strong',
      password: 'long enough passphrase!',
    });
    expect(strong.status).toBe(201);
    expect(mailsTo('strong@example.test')).toHaveLength(0);
    const ldap = await create({
      email: 'dir@example.test',
      displayName: 'Directory',
      authSource: 'ldap',
      ldapDn: 'uid=dir,ou=people,dc=example,dc=org',
    });
    expect(ldap.status).toBe(201);
    expect(ldap.body).toMatchObject({ authSource: 'ldap', ldapDn: 'uid=dir,ou=people,dc=example,dc=org' });
    const ldapWithPassword = await create({
      email: 'dir2@example.test',
      displayName: 'Directory',
      authSource: 'ldap',
      password: 'long enough passphrase!',
    });
    expect(ldapWithPassword.status).toBe(400);
  });

  it('refuses non-admins, unknown roles, taken emails, bad emails and unknown fields', async () => {
    expect((await server.call('POST', '/api/v1/users', { body: { email: 'a@b.test', displayName: 'A' } })).status).toBe(
      401,
    );
    expect((await create({ email: 'x@example.test', displayName: 'X' }, plain.token)).status).toBe(403);
    const role = await create({ email: 'role@example.test', displayName: 'R', roles: ['NOPE'] });
    expect(role.status).toBe(400);
    expect(role.body.error.details.roles).toContain('NOPE');
    await create({ email: 'taken@example.test', displayName: 'T', password: 'long enough passphrase!' });
    expect((await create({ email: 'TAKEN@example.test', displayName: 'T' })).status).toBe(409);
    expect((await create({ email: 'not an email', displayName: 'T' })).status).toBe(400);
    expect((await create({ email: 'extra@example.test', displayName: 'T', isAdmin: true })).status).toBe(400);
    expect((await create({ displayName: 'T' })).status).toBe(400);
  });
});

describe('POST /users/{id}/password-reset (admin)', () => {
  it('mails the owner a reset link and answers without it', async () => {
    const made = await create({
      email: 'forgetful@example.test',
      displayName: 'F',
      password: 'long enough passphrase!',
    });
    const sent = await server.call('POST', `/api/v1/users/${made.body.id}/password-reset`, { token: admin.token });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ success: true, message: expect.any(String) });
    await vi.waitFor(() => expect(mailsTo('forgetful@example.test')).toHaveLength(1), { timeout: 5000 });
    const token = resetCode(mailsTo('forgetful@example.test')[0].raw);
    const reset = await server.call('POST', '/api/v1/auth/reset-password', {
      body: { token, newPassword: 'another fine passphrase!' },
    });
    expect(reset.status).toBe(200);
  });

  it('is for admins, for known local accounts', async () => {
    const made = await create({ email: 'someone@example.test', displayName: 'S', password: 'long enough passphrase!' });
    const path = `/api/v1/users/${made.body.id}/password-reset`;
    expect((await server.call('POST', path)).status).toBe(401);
    expect((await server.call('POST', path, { token: plain.token })).status).toBe(403);
    expect(
      (await server.call('POST', '/api/v1/users/0123456789abcdef01234567/password-reset', { token: admin.token }))
        .status,
    ).toBe(404);
    expect((await server.call('POST', '/api/v1/users/nope/password-reset', { token: admin.token })).status).toBe(404);
    const ldap = await create({ email: 'ldap-only@example.test', displayName: 'L', authSource: 'ldap' });
    expect(
      (await server.call('POST', `/api/v1/users/${ldap.body.id}/password-reset`, { token: admin.token })).status,
    ).toBe(422);
  });
});
