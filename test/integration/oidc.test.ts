import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../runtime/auth/totp.js';
import type { OidcProviderConfig } from '../../runtime/config/runtimeConfig.js';
import {
  browse,
  CLIENT_ID,
  CLIENT_SECRET,
  CookieJar,
  oidcProvider,
  signInAtProvider,
} from '../support/oidcProvider.js';
import { checkResponse } from '../support/openApiCheck.js';
import { capturingLogger } from '../support/smtp.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

let idp: Awaited<ReturnType<typeof oidcProvider>>;
let server: TestServer;
const log = capturingLogger();

function providers(issuer: string): OidcProviderConfig[] {
  const base = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['openid', 'email', 'profile'] };
  return [
    { ...base, name: 'test', label: 'Test IdP', issuer, roles: ['USER', 'EDITOR'] },
    { ...base, name: 'corp', label: 'Corp', issuer, roles: ['USER'], allowedDomains: ['corp.test'] },
    // The same provider with keys of its own (its JWK Set cache starts empty): the signature test uses it.
    { ...base, name: 'keyed', label: 'Keyed', issuer, roles: ['USER'] },
    // The same provider under a name it does not answer to: discovery must refuse it.
    { ...base, name: 'wrong', label: 'Wrong', issuer: issuer.replace('127.0.0.1', 'localhost'), roles: ['USER'] },
  ];
}

beforeAll(async () => {
  idp = await oidcProvider({
    unverified: { email: 'unverified@example.test', emailVerified: false },
    linker: { email: 'local@example.test', name: 'Linked Person' },
    corpie: { email: 'someone@corp.test' },
    outsider: { email: 'someone@elsewhere.test' },
    pending: { email: 'pending@example.test' },
    mfa: { email: 'mfa-user@example.test' },
  });
  server = await startTestServer(
    {},
    { overrides: { rateLimit: GENEROUS_LIMITS, oidc: providers(idp.issuer) }, logger: log.logger },
  );
  idp.configure(['test', 'corp', 'keyed'].map((name) => `${server.url}/api/v1/auth/oidc/${name}/callback`));
}, 60_000);
afterAll(async () => {
  await server?.close();
  await idp?.close();
});

/** Every answer of entigen in these flows must match the OpenAPI document, as in the rest of the suite. */
async function open(jar: CookieJar, url: string, init?: RequestInit): Promise<Response> {
  const response = await browse(jar, url, init);
  const text = await response.clone().text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  const problems = checkResponse(
    init?.method ?? 'GET',
    url,
    response.status,
    response.headers.get('content-type'),
    body,
  );
  expect(problems).toEqual([]);
  return response;
}

/** A browser's whole sign-in: start, the provider's pages, and the callback; returns the callback's answer. */
async function signIn(
  login: string,
  options: { jar?: CookieJar; deny?: boolean; returnTo?: string; provider?: string } = {},
) {
  const jar = options.jar ?? new CookieJar();
  const provider = options.provider ?? 'test';
  const query = options.returnTo ? `?returnTo=${encodeURIComponent(options.returnTo)}` : '';
  const start = await open(jar, `${server.url}/api/v1/auth/oidc/${provider}/start${query}`);
  expect(start.status).toBe(302);
  const callback = await signInAtProvider(jar, start.headers.get('location')!, login, {
    callbackPrefix: `${server.url}/api/v1/auth/oidc/${provider}/callback`,
    deny: options.deny,
  });
  return { jar, callback, response: await open(jar, callback) };
}

const json = (response: Response): Promise<any> => response.json();
const me = async (jar: CookieJar) => {
  const response = await browse(jar, `${server.url}/api/v1/auth/me`);
  return { status: response.status, body: await json(response) };
};

describe('OpenID Connect sign-in against a real provider (oidc-provider)', () => {
  it('lists the providers and starts the code flow with PKCE, state and nonce', async () => {
    const listed = await server.call('GET', '/api/v1/auth/oidc');
    expect(listed.body.items.map((p: { name: string }) => p.name)).toEqual(['test', 'corp', 'keyed', 'wrong']);
    expect(listed.body.items[0]).toEqual({ name: 'test', label: 'Test IdP', startUrl: '/api/v1/auth/oidc/test/start' });
    const start = await open(new CookieJar(), `${server.url}/api/v1/auth/oidc/test/start`);
    const location = new URL(start.headers.get('location')!);
    expect(location.origin).toBe(idp.issuer);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: `${server.url}/api/v1/auth/oidc/test/callback`,
      scope: 'openid email profile',
    });
    for (const param of ['state', 'nonce', 'code_challenge'])
      expect(location.searchParams.get(param)).toMatch(/^.{20,}$/);
    // The flow cookie: Lax (the provider's redirect back is cross-site), httpOnly, limited to the OIDC routes.
    expect(start.headers.get('set-cookie')).toMatch(
      /_oidc=.+Path=\/api\/v1\/auth\/oidc; .*HttpOnly; Secure; SameSite=Lax/,
    );
  });

  it('creates an account for a new verified email and signs the browser in as password login does', async () => {
    const { jar, response } = await signIn('newcomer', { returnTo: '/api/docs' });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<meta http-equiv="refresh" content="0;url=/api/docs">');
    expect(response.headers.getSetCookie().join('\n')).toMatch(
      /entigen_uid=[^;]+; Max-Age=\d+; Path=\/; .*HttpOnly; Secure; SameSite=Strict/,
    );
    const who = await me(jar);
    expect(who.status).toBe(200);
    expect(who.body.user).toMatchObject({
      email: 'newcomer@example.test',
      displayName: 'User newcomer',
      emailVerified: true,
    });
    expect(who.body.roles).toEqual(['USER', 'EDITOR']);
    const [stored] = await server.ctx.store.find('users', {
      where: { field: 'email', op: 'eq', value: 'newcomer@example.test' },
    });
    expect(stored).toMatchObject({ authSource: 'oidc', oidcSubjects: ['test|newcomer'], passwordHash: null });
    expect(stored.lastLoginAt).toBeTruthy();
    // Signing in again finds the same account by its subject.
    const again = await signIn('newcomer');
    expect((await me(again.jar)).body.user.id).toBe(stored.id);
  });

  it('links an existing account whose address is proven by verified email; password sign-in still works', async () => {
    // An account an administrator made: the administrator vouched for its address.
    const admin = await server.user({ roles: ['ADMIN'] });
    const made = await server.call('POST', '/api/v1/users', {
      token: admin.token,
      body: { email: 'local@example.test', password: 'a long passphrase 4!', displayName: 'Local' },
    });
    expect(made.status).toBe(201);
    const { jar, response } = await signIn('linker');
    expect(response.status).toBe(200);
    const who = await me(jar);
    expect(who.body.user.id).toBe(made.body.data?.id ?? made.body.id);
    expect(who.body.roles).toEqual(['USER']);
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { email: 'local@example.test', password: 'a long passphrase 4!' },
    });
    expect(login.status).toBe(200);
  });

  it('never signs in or links by an unverified email, nor one outside the allowed domains', async () => {
    const refused = await signIn('unverified');
    expect(refused.response.status).toBe(403);
    expect((await json(refused.response)).error.message).toMatch(/has not verified unverified@example.test/);
    expect(
      await server.ctx.store.count('users', { where: { field: 'email', op: 'eq', value: 'unverified@example.test' } }),
    ).toBe(0);
    expect((await me(refused.jar)).status).toBe(401);

    // The corp provider is the same IdP with a domain rule.
    const outsider = await signIn('outsider', { provider: 'corp' });
    expect(outsider.response.status).toBe(403);
    expect((await json(outsider.response)).error.message).toMatch(/elsewhere.test may not sign in with Corp/);
    const insider = await signIn('corpie', { provider: 'corp' });
    expect(insider.response.status).toBe(200);
    expect((await me(insider.jar)).body.user.email).toBe('someone@corp.test');
  });

  it('takes a registered account whose address nobody proved from its registrant: no pre-hijacking', async () => {
    // A stranger registers the address first (verification is off, the default) and sets up ways back in.
    const password = 'squatter passphrase 9!';
    const registered = await server.call('POST', '/api/v1/auth/register', {
      body: { email: 'pending@example.test', password, displayName: 'Squatter' },
    });
    expect(registered.status).toBe(201);
    expect(registered.body.user.emailVerified).toBe(false);
    const squatter = registered.body.token as string;
    const key = await server.call('POST', '/api/v1/apikeys', {
      token: squatter,
      body: {
        name: 'way back',
        permissions: ['account:edit'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(key.status).toBe(201);
    const apiKey = key.body.data.token as string;
    expect((await server.call('GET', '/api/v1/auth/me', { token: apiKey })).status).toBe(200);

    // The owner of the address signs in with the provider, which vouches for it.
    const { jar, response } = await signIn('pending');
    expect(response.status).toBe(200);
    const who = await me(jar);
    expect(who.body.user).toMatchObject({ id: registered.body.user.id, emailVerified: true });
    // Every way the registrant had in is gone: password, session, API key.
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { email: 'pending@example.test', password },
    });
    expect(login.status).toBe(401);
    expect((await server.call('GET', '/api/v1/auth/me', { token: squatter })).status).toBe(401);
    expect((await server.call('GET', '/api/v1/auth/me', { token: apiKey })).status).toBe(401);
    const [stored] = await server.ctx.store.find('users', {
      where: { field: 'email', op: 'eq', value: 'pending@example.test' },
    });
    expect(stored).toMatchObject({ passwordHash: null, oidcSubjects: ['test|pending'], emailVerified: true });
  });

  it('answers every broken flow with the envelope: denied consent, bad state, no flow, replay, expired code', async () => {
    const denied = await signIn('someone', { deny: true });
    expect(denied.response.status).toBe(401);
    expect((await json(denied.response)).error).toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringMatching(/access_denied/),
    });

    // A state that is not the one this browser started with.
    const jar = new CookieJar();
    const start = await open(jar, `${server.url}/api/v1/auth/oidc/test/start`);
    const callback = await signInAtProvider(jar, start.headers.get('location')!, 'statey', {
      callbackPrefix: `${server.url}/api/v1/auth/oidc/test/callback`,
    });
    const tampered = new URL(callback);
    tampered.searchParams.set('state', 'forged-state');
    const bad = await open(jar, tampered.href);
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.details.state).toMatch(/does not match/);
    // The flow cookie ended with that answer: the genuine callback now has no flow either.
    const noFlow = await open(jar, callback);
    expect(noFlow.status).toBe(400);
    // Another browser (no flow cookie) cannot use someone's callback URL.
    expect((await open(new CookieJar(), callback)).status).toBe(400);

    // Replay: the same callback with the same cookie after it was used.
    const used = await signIn('replayer');
    expect(used.response.status).toBe(200);
    const replayJar = new CookieJar();
    const second = await open(replayJar, `${server.url}/api/v1/auth/oidc/test/start`);
    const flowCookie = second.headers.getSetCookie()[0].split(';')[0];
    const secondCallback = await signInAtProvider(replayJar, second.headers.get('location')!, 'replayer', {
      callbackPrefix: `${server.url}/api/v1/auth/oidc/test/callback`,
    });
    const firstUse = await fetch(secondCallback, { headers: { cookie: flowCookie }, redirect: 'manual' });
    expect(firstUse.status).toBe(200);
    const replayed = await fetch(secondCallback, { headers: { cookie: flowCookie }, redirect: 'manual' });
    expect(replayed.status).toBe(401);
    expect((await json(replayed)).error.message).toMatch(/expired or was used already/);
    // Neither the code nor the sealed flow reaches the log (the request log leaves query strings out).
    expect(log.text()).not.toContain(new URL(secondCallback).searchParams.get('code')!);
    expect(log.text()).not.toContain(flowCookie.split('=')[1]);
    expect(log.text()).toContain('/api/v1/auth/oidc/test/callback');

    // An expired code.
    idp.state.codeTtlSeconds = 1;
    try {
      const slowJar = new CookieJar();
      const slow = await open(slowJar, `${server.url}/api/v1/auth/oidc/test/start`);
      const late = await signInAtProvider(slowJar, slow.headers.get('location')!, 'slowpoke', {
        callbackPrefix: `${server.url}/api/v1/auth/oidc/test/callback`,
      });
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const expired = await open(slowJar, late);
      expect(expired.status).toBe(401);
      expect((await json(expired)).error.code).toBe('UNAUTHORIZED');
    } finally {
      idp.state.codeTtlSeconds = 60;
    }
  }, 30_000);

  it('refuses an ID token whose signature does not verify with the keys the provider publishes', async () => {
    const { keys } = (await (await fetch(`${idp.issuer}/jwks`)).json()) as { keys: { kid: string; alg?: string }[] };
    const { generateKeyPair, exportJWK } = await import('jose');
    const alg = keys[0].alg ?? 'RS256';
    const other = await exportJWK((await generateKeyPair(alg, { extractable: true })).publicKey);
    // The provider signs with its own key; its JWK Set now names another key under the same kid.
    idp.state.publishedKeys = { keys: [{ ...other, kid: keys[0].kid, alg, use: 'sig' }] };
    try {
      const forged = await signIn('forgery', { provider: 'keyed' });
      expect(forged.response.status).toBe(401);
      expect((await json(forged.response)).error).toMatchObject({
        code: 'UNAUTHORIZED',
        message: expect.stringMatching(/did not pass its checks/),
      });
      expect(
        await server.ctx.store.find('users', { where: { field: 'email', op: 'eq', value: 'forgery@example.test' } }),
      ).toEqual([]);
      expect((await me(forged.jar)).status).toBe(401);
    } finally {
      idp.state.publishedKeys = undefined;
    }
  });

  it('refuses a provider that is not the issuer it was configured as, unknown providers and foreign returnTo', async () => {
    const wrong = await open(new CookieJar(), `${server.url}/api/v1/auth/oidc/wrong/start`);
    expect(wrong.status).toBe(503);
    expect((await json(wrong)).error.message).toMatch(/does not describe itself as http:\/\/localhost/);
    expect((await open(new CookieJar(), `${server.url}/api/v1/auth/oidc/nobody/start`)).status).toBe(404);
    for (const returnTo of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'relative', '/a\u0001b']) {
      const refused = await open(
        new CookieJar(),
        `${server.url}/api/v1/auth/oidc/test/start?returnTo=${encodeURIComponent(returnTo)}`,
      );
      expect(refused.status).toBe(400);
    }
    expect((await open(new CookieJar(), `${server.url}/api/v1/auth/oidc/test/callback?code=x&state=y`)).status).toBe(
      400,
    );
  });

  it('asks an account with two-factor authentication for its code before the session', async () => {
    const { jar: firstJar } = await signIn('mfa');
    const token = firstJar.value(server.url, 'entigen_uid')!;
    const enrolled = await server.call('POST', '/api/v1/auth/mfa/enroll', { token });
    const secret = enrolled.body.secret as string;
    await server.call('POST', '/api/v1/auth/mfa/confirm', { token, body: { code: totpCode(secret, Date.now()) } });

    const { jar, response } = await signIn('mfa', { returnTo: '/api/v1/auth/me' });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('action="/api/v1/auth/oidc/mfa"');
    expect(jar.value(server.url, 'entigen_uid')).toBeUndefined();
    const post = (code: string, cookieJar = jar) =>
      open(cookieJar, `${server.url}/api/v1/auth/oidc/mfa`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ code }).toString(),
      });
    const wrong = await post('000000');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('That code is not valid');
    // Without the pending sign-in's cookie (another site's form), nothing happens.
    expect((await post(totpCode(secret, Date.now() + 30_000), new CookieJar())).status).toBe(401);
    const passed = await post(totpCode(secret, Date.now() + 30_000));
    expect(passed.status).toBe(303);
    expect(passed.headers.get('location')).toBe('/api/v1/auth/me');
    expect((await me(jar)).body.user.email).toBe('mfa-user@example.test');
    expect(log.text()).not.toContain(secret);
  });
});
