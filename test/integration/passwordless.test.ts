import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../runtime/auth/totp.js';
import { mailConfig, smtpServer, textOf } from '../support/smtp.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

const PASSWORD = 'correct horse battery staple!';
let smtp: Awaited<ReturnType<typeof smtpServer>>;
let server: TestServer;

beforeAll(async () => {
  smtp = await smtpServer();
  server = await startTestServer(
    {},
    {
      overrides: {
        rateLimit: GENEROUS_LIMITS,
        mail: mailConfig(smtp.port, { linkBase: 'https://app.example.test' }),
        passwordless: { link: true, code: true },
      },
    },
  );
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const call = (method: string, path: string, options?: Parameters<TestServer['call']>[2]) =>
  server.call(method, path, options);
const register = async (email: string) => {
  const res = await call('POST', '/api/v1/auth/register', { body: { email, password: PASSWORD, displayName: 'P' } });
  expect(res.status).toBe(201);
  return res.body;
};
const request = (email: string) => call('POST', '/api/v1/auth/passwordless', { body: { email } });
const signIn = (body: Record<string, string>) => call('POST', '/api/v1/auth/passwordless/sign-in', { body });

/** The newest mail to `address` once it arrives: its link's token and its code. */
async function mailTo(address: string, count = 1): Promise<{ token: string; code: string; text: string }> {
  await expect.poll(() => smtp.received.filter((m) => m.to.includes(address)).length, { timeout: 10_000 }).toBe(count);
  const text = textOf(smtp.received.filter((m) => m.to.includes(address)).at(-1)!.raw);
  return {
    text,
    token: /passwordless\?token=([A-Za-z0-9_-]+)/.exec(text)![1],
    code: /code where you asked to sign in: (\d{6})/.exec(text)![1],
  };
}

describe('passwordless sign-in by mail', () => {
  it('signs in once with the mailed link, then never again with it', async () => {
    const { user } = await register('link@example.test');
    const asked = await request('link@example.test');
    expect(asked.status).toBe(202);
    const { token, text } = await mailTo('link@example.test');
    expect(text).toContain('https://app.example.test/passwordless?token=');
    const signedIn = await signIn({ token });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.id).toBe(user.id);
    expect(signedIn.headers.get('set-cookie')).toMatch(/entigen_uid=/);
    const me = await call('GET', '/api/v1/auth/me', { token: signedIn.body.token });
    expect(me.body.user.email).toBe('link@example.test');
    const again = await signIn({ token });
    expect(again.status).toBe(401);
    expect(again.body.error.message).toBe('The sign-in link or code is invalid, used or expired');
  });

  it('signs in with the address and the six-digit code; five wrong codes void it', async () => {
    await register('code@example.test');
    await request('code@example.test');
    const { code } = await mailTo('code@example.test');
    expect((await signIn({ email: 'code@example.test', code })).status).toBe(200);

    await request('code@example.test');
    const second = await mailTo('code@example.test', 2);
    const wrong = second.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await signIn({ email: 'code@example.test', code: wrong })).status).toBe(401);
    const late = await signIn({ email: 'code@example.test', code: second.code });
    expect(late.status).toBe(401);
    // The link of a voided request is void too.
    expect((await signIn({ token: second.token })).status).toBe(401);
  });

  it('answers every address alike and mails only existing accounts, at most three times in ten minutes', async () => {
    const before = smtp.received.length;
    const unknown = await request('nobody@example.test');
    expect(unknown.status).toBe(202);
    await register('busy@example.test');
    const known = await request('busy@example.test');
    expect(known.body).toEqual(unknown.body);
    await mailTo('busy@example.test', 1);
    await request('busy@example.test');
    await mailTo('busy@example.test', 2);
    await request('busy@example.test');
    await mailTo('busy@example.test', 3);
    await request('busy@example.test');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((m) => m.to.includes('busy@example.test'))).toHaveLength(3);
    expect(smtp.received.filter((m) => m.to.includes('nobody@example.test'))).toHaveLength(0);
    expect(smtp.received.length - before).toBe(3);
    // A new request ends the earlier ones: only the newest code signs in.
    const codes = smtp.received
      .filter((m) => m.to.includes('busy@example.test'))
      .map((m) => /code where you asked to sign in: (\d{6})/.exec(textOf(m.raw))![1]);
    if (codes[0] !== codes[2]) expect((await signIn({ email: 'busy@example.test', code: codes[0] })).status).toBe(401);
    expect((await signIn({ email: 'busy@example.test', code: codes[2] })).status).toBe(200);
  });

  it('mails at most three of a burst of requests for one address sent at once', async () => {
    await register('burst@example.test');
    const answers = await Promise.all(Array.from({ length: 8 }, () => request('burst@example.test')));
    expect(answers.every((a) => a.status === 202)).toBe(true);
    await expect.poll(() => smtp.received.filter((m) => m.to.includes('burst@example.test')).length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(smtp.received.filter((m) => m.to.includes('burst@example.test')).length).toBeLessThanOrEqual(3);
  });

  it('still asks for the authenticator code where two-factor authentication is on', async () => {
    const { token } = await register('totp@example.test');
    const enrolled = await call('POST', '/api/v1/auth/mfa/enroll', { token, body: { currentPassword: PASSWORD } });
    const { secret } = enrolled.body;
    const confirmed = await call('POST', '/api/v1/auth/mfa/confirm', {
      token,
      body: { code: totpCode(secret, Date.now()) },
    });
    expect(confirmed.status).toBe(200);
    await request('totp@example.test');
    const mail = await mailTo('totp@example.test');
    const challenged = await signIn({ token: mail.token });
    expect(challenged.status).toBe(202);
    expect(challenged.body).toMatchObject({ mfaRequired: true });
    expect(challenged.body.token).toBeUndefined();
    const verified = await call('POST', '/api/v1/auth/mfa/verify', {
      // A recovery code: the authenticator's current code was spent on the confirmation.
      body: { mfaToken: challenged.body.mfaToken, code: confirmed.body.recoveryCodes[0] },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.token).toEqual(expect.any(String));
  });

  it('refuses malformed proofs with 400', async () => {
    expect((await signIn({ email: 'code@example.test', code: '12ab56' })).status).toBe(400);
    expect((await signIn({ email: 'code@example.test' })).status).toBe(400);
    expect((await call('POST', '/api/v1/auth/passwordless', { body: { email: 'x@y.z', extra: 1 } })).status).toBe(400);
  });
});
