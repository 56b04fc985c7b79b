import { afterEach, describe, expect, it, vi } from 'vitest';
import { capturingLogger, LIMITS, mailConfig, resetCode, smtpServer, textOf } from '../support/smtp.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const close of closers.splice(0)) await close();
});

const register = (email: string) =>
  server!.call('POST', '/api/v1/auth/register', {
    body: { email, password: 'correct horse battery staple!', displayName: 'Mail User' },
  });

describe('mail through a real SMTP server', () => {
  it('delivers the password-reset mail from the template; its link works once; no secret reaches the log', async () => {
    const smtp = await smtpServer();
    closers.push(smtp.close);
    const log = capturingLogger();
    server = await startTestServer(
      {},
      { overrides: { rateLimit: LIMITS, mail: mailConfig(smtp.port) }, logger: log.logger },
    );
    await register('reader@example.test');
    const asked = await server.call('POST', '/api/v1/auth/forgot-password', { body: { email: 'reader@example.test' } });
    expect(asked.status).toBe(202);
    await vi.waitFor(() => expect(smtp.received).toHaveLength(1), { timeout: 5000 });
    const [mail] = smtp.received;
    expect(mail.from).toBe('no-reply@example.test');
    expect(mail.to).toEqual(['reader@example.test']);
    expect(mail.raw).toMatch(/^Subject: Reset your .+ password$/m);
    // Text and HTML parts, the link on the configured base.
    expect(mail.raw).toMatch(/Content-Type: text\/plain/);
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    const code = resetCode(mail.raw);
    expect(textOf(mail.raw)).toContain(`https://app.example.test/reset-password?token=${code}`);

    const reset = (newPassword: string) =>
      server!.call('POST', '/api/v1/auth/reset-password', { body: { token: code, newPassword } });
    expect((await reset('a brand new password!')).status).toBe(200);
    expect((await reset('a second new password!')).status).toBe(400);

    // The outbox shows the mail as sent to administrators, without its bodies.
    const admin = await server.user({ roles: ['ADMIN'] });
    const listed = await server.call('GET', '/api/v1/outgoingMails?status=sent', { token: admin.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.items).toHaveLength(1);
    expect(listed.body.data.items[0]).toMatchObject({ to: 'reader@example.test', status: 'sent', attempts: 1 });
    expect(JSON.stringify(listed.body)).not.toContain(code);
    const user = await server.user();
    expect((await server.call('GET', '/api/v1/outgoingMails', { token: user.token })).status).toBe(403);
    expect(JSON.stringify(await server.ctx.store.find('outgoingMails', {}))).not.toContain(code);
    expect(log.text()).not.toContain(code);
  });

  it('answers at once while the SMTP server is down, and the mail arrives once it is back', async () => {
    const first = await smtpServer();
    const port = first.port;
    await first.close();
    server = await startTestServer({}, { overrides: { rateLimit: LIMITS, mail: mailConfig(port) } });
    await register('patient@example.test');
    const started = Date.now();
    const asked = await server.call('POST', '/api/v1/auth/forgot-password', {
      body: { email: 'patient@example.test' },
    });
    expect(asked.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(2000);
    // The first attempt fails and is recorded for the administrators.
    await vi.waitFor(
      async () => {
        const [mail] = await server!.ctx.store.find('outgoingMails', {});
        expect(mail).toMatchObject({ status: 'pending', attempts: 1 });
        expect(mail.lastError).toMatch(/ECONNREFUSED|connect/i);
      },
      { timeout: 5000 },
    );
    const back = await smtpServer({ port });
    closers.push(back.close);
    await vi.waitFor(() => expect(back.received).toHaveLength(1), { timeout: 10_000 });
    expect(back.received[0].to).toEqual(['patient@example.test']);
    await vi.waitFor(async () => {
      const [mail] = await server!.ctx.store.find('outgoingMails', {});
      expect(mail).toMatchObject({ status: 'sent', sealedBody: null });
    });
  });

  it('fails a mail after its attempts, shows why, and sends it when an admin sets it back to pending', async () => {
    const gone = await smtpServer();
    const port = gone.port;
    await gone.close();
    server = await startTestServer(
      {},
      { overrides: { rateLimit: LIMITS, mail: mailConfig(port, { attempts: 2, backoffMs: 100 }) } },
    );
    await register('failing@example.test');
    await server.call('POST', '/api/v1/auth/forgot-password', { body: { email: 'failing@example.test' } });
    const admin = await server.user({ roles: ['ADMIN'] });
    let failed: Record<string, unknown> | undefined;
    await vi.waitFor(
      async () => {
        const listed = await server!.call('GET', '/api/v1/outgoingMails?status=failed', { token: admin.token });
        [failed] = listed.body.data.items;
        expect(failed).toMatchObject({ status: 'failed', attempts: 2, to: 'failing@example.test' });
        expect(failed!.lastError).toBeTruthy();
      },
      { timeout: 5000 },
    );
    const back = await smtpServer({ port });
    closers.push(back.close);
    const retried = await server.call('PATCH', `/api/v1/outgoingMails/${failed!.id}`, {
      token: admin.token,
      body: { status: 'pending' },
    });
    expect(retried.status).toBe(200);
    await vi.waitFor(() => expect(back.received).toHaveLength(1), { timeout: 10_000 });
  });

  it('sends over STARTTLS, refusing a certificate it cannot verify unless told to accept it', async () => {
    const smtp = await smtpServer({ tls: true });
    closers.push(smtp.close);
    const strict = mailConfig(smtp.port, { tls: { rejectUnauthorized: true, requireTLS: true } });
    server = await startTestServer({}, { overrides: { rateLimit: LIMITS, mail: strict } });
    await register('tls@example.test');
    await server.call('POST', '/api/v1/auth/forgot-password', { body: { email: 'tls@example.test' } });
    await vi.waitFor(
      async () => {
        const [mail] = await server!.ctx.store.find('outgoingMails', {});
        expect(mail.lastError).toMatch(/certificate/i);
      },
      { timeout: 5000 },
    );
    expect(smtp.received).toHaveLength(0);
    await server.close();
    const lenient = mailConfig(smtp.port, { tls: { rejectUnauthorized: false, requireTLS: true } });
    server = await startTestServer({}, { overrides: { rateLimit: LIMITS, mail: lenient } });
    await register('tls@example.test');
    await server.call('POST', '/api/v1/auth/forgot-password', { body: { email: 'tls@example.test' } });
    await vi.waitFor(() => expect(smtp.received).toHaveLength(1), { timeout: 5000 });
  });

  it('tests the mail settings on demand: the admin route and the setup page button report the server’s answer', async () => {
    const smtp = await smtpServer();
    closers.push(smtp.close);
    server = await startTestServer(
      {},
      { withAdmin: false, overrides: { rateLimit: LIMITS, mail: mailConfig(smtp.port) } },
    );
    // Before setup: the page's button mails the address typed into the form, and shows the answer.
    const form = (body: Record<string, string>) =>
      server!.call('POST', '/setup/test-mail', {
        body: new URLSearchParams(body).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const page = await form({ name: 'Ada', email: 'ada@example.test', password: 'not kept' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('The mail server accepted a test mail for ada@example.test');
    expect(page.body).toContain('value="Ada"');
    expect(page.body).not.toContain('not kept');
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].to).toEqual(['ada@example.test']);
    expect(smtp.received[0].raw).toMatch(/^Subject: .+: a test mail$/m);
    const bad = await form({ email: 'not an address' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('must be an email address');
    const json = await server!.call('POST', '/setup/test-mail', { body: { email: 'json@example.test' } });
    expect(json.body).toMatchObject({ ok: true, transport: 'smtp', to: 'json@example.test' });

    // After setup: 404 there; administrators use POST /api/v1/auth/test-mail.
    const admin = await server!.user({ roles: ['ADMIN'], email: 'root@example.test' });
    expect((await form({ email: 'late@example.test' })).status).toBe(404);
    const plain = await server!.user();
    expect((await server!.call('POST', '/api/v1/auth/test-mail', { token: plain.token })).status).toBe(403);
    const mine = await server!.call('POST', '/api/v1/auth/test-mail', { token: admin.token });
    expect(mine.body).toMatchObject({ ok: true, transport: 'smtp', to: 'root@example.test' });
    // A server that is down: a result that says so, not an error (and nothing queued for later).
    await smtp.close();
    const down = await server!.call('POST', '/api/v1/auth/test-mail', {
      token: admin.token,
      body: { to: 'else@example.test' },
    });
    expect(down.status).toBe(200);
    expect(down.body.ok).toBe(false);
    expect(down.body.message).toMatch(/ECONNREFUSED|connect/i);
    expect(await server!.ctx.store.count('outgoingMails', {})).toBe(0);
  });
});
