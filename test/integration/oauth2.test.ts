import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuth2ProviderConfig } from '../../runtime/config/runtimeConfig.js';
import { OAUTH2_CLIENT_ID, OAUTH2_CLIENT_SECRET, oauth2Provider } from '../support/oauth2Provider.js';
import { browse, CookieJar } from '../support/oidcProvider.js';
import { checkResponse } from '../support/openApiCheck.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

let github: Awaited<ReturnType<typeof oauth2Provider>>;
let server: TestServer;

beforeAll(async () => {
  github = await oauth2Provider({
    octo: {
      id: 101,
      login: 'octo',
      name: 'Octo Cat',
      emails: [
        { email: 'octo-old@example.test', primary: false, verified: true },
        { email: 'octo@example.test', primary: true, verified: true },
      ],
    },
    shy: { id: 102, login: 'shy', emails: [{ email: 'shy@example.test', primary: true, verified: false }] },
    sneaky: {
      id: 103,
      login: 'sneaky',
      // A verified address that is not the primary one must not link to the account that owns it.
      emails: [
        { email: 'local-owner@example.test', primary: false, verified: true },
        { email: 'sneaky@example.test', primary: true, verified: false },
      ],
    },
    linker: {
      id: 104,
      login: 'linker',
      emails: [{ email: 'local-owner@example.test', primary: true, verified: true }],
    },
  });
  const provider: OAuth2ProviderConfig = {
    name: 'github',
    label: 'GitHub',
    ...github.settings,
    clientId: OAUTH2_CLIENT_ID,
    clientSecret: OAUTH2_CLIENT_SECRET,
    scopes: ['read:user', 'user:email'],
    pkce: true,
    roles: ['USER'],
  };
  server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS, oauth2: [provider] } });
});
afterAll(async () => {
  await server?.close();
  await github?.close();
});

/** entigen's answers in these flows are checked against the OpenAPI document, as everywhere. */
async function open(jar: CookieJar, url: string): Promise<Response> {
  const response = await browse(jar, url);
  const text = await response.clone().text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  expect(checkResponse('GET', url, response.status, response.headers.get('content-type'), body)).toEqual([]);
  return response;
}

/** A browser's sign-in: entigen's start, the provider's authorize (which answers at once), the callback. */
async function signIn(login: string, jar = new CookieJar()) {
  github.signInAs(login);
  const start = await open(jar, `${server.url}/api/v1/auth/oidc/github/start?returnTo=/admin`);
  expect(start.status).toBe(302);
  const atProvider = await browse(jar, start.headers.get('location')!);
  expect(atProvider.status).toBe(302);
  const callback = atProvider.headers.get('location')!;
  expect(callback.startsWith(`${server.url}/api/v1/auth/oidc/github/callback?`)).toBe(true);
  return { jar, callback, response: await open(jar, callback) };
}

const me = async (jar: CookieJar) => {
  const response = await browse(jar, `${server.url}/api/v1/auth/me`);
  return { status: response.status, body: (await response.json()) as any };
};

describe('sign-in with a plain OAuth2 provider shaped like GitHub', () => {
  it('is listed with the OpenID providers and starts the code flow with state and PKCE', async () => {
    const listed = await server.call('GET', '/api/v1/auth/oidc');
    expect(listed.body.items).toEqual([
      { name: 'github', label: 'GitHub', startUrl: '/api/v1/auth/oidc/github/start' },
    ]);
    const start = await open(new CookieJar(), `${server.url}/api/v1/auth/oidc/github/start`);
    const location = new URL(start.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(github.settings.authorizeUrl);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: OAUTH2_CLIENT_ID,
      redirect_uri: `${server.url}/api/v1/auth/oidc/github/callback`,
      scope: 'read:user user:email',
      code_challenge_method: 'S256',
    });
    expect(location.searchParams.get('state')).toMatch(/^.{20,}$/);
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('signs in with the primary verified address, creating the account once, linked by the GitHub id', async () => {
    const { jar, response } = await signIn('octo');
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('content="0;url=/admin"');
    const who = await me(jar);
    expect(who.status).toBe(200);
    expect(who.body.user).toMatchObject({ email: 'octo@example.test', displayName: 'Octo Cat', emailVerified: true });
    const [stored] = await server.ctx.store.find('users', {
      where: { field: 'email', op: 'eq', value: 'octo@example.test' },
    });
    expect(stored.oidcSubjects).toEqual(['github|101']);
    // The code went back with the PKCE verifier and the client secret.
    const exchange = github.seen.token.at(-1)!;
    expect(exchange.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(exchange.get('client_secret')).toBe(OAUTH2_CLIENT_SECRET);
    const again = await signIn('octo');
    expect((await me(again.jar)).body.user.id).toBe(stored.id);
  });

  it('refuses a primary address GitHub has not verified, and never links through a secondary one', async () => {
    const shy = await signIn('shy');
    expect(shy.response.status).toBe(403);
    expect(((await shy.response.json()) as any).error.message).toMatch(/has not verified shy@example.test/);

    const owner = await server.user({ email: 'local-owner@example.test' });
    const sneaky = await signIn('sneaky');
    expect(sneaky.response.status).toBe(403);
    const [account] = await server.ctx.store.find('users', {
      where: { field: 'email', op: 'eq', value: 'local-owner@example.test' },
    });
    expect(account.oidcSubjects ?? []).toEqual([]);

    // Its own verified primary address links to the existing account.
    const linked = await signIn('linker');
    expect(linked.response.status).toBe(200);
    expect((await me(linked.jar)).body.user.id).toBe(owner.id);
  });

  it('refuses a replayed code, a foreign state, and a callback without the flow this browser started', async () => {
    const first = await signIn('octo');
    expect(first.response.status).toBe(200);
    // The same callback again: the flow cookie is gone, so the state belongs to no sign-in here.
    const replay = await open(first.jar, first.callback);
    expect(replay.status).toBe(400);
    // Another browser's callback with this browser's flow.
    const jar = new CookieJar();
    github.signInAs('octo');
    await open(jar, `${server.url}/api/v1/auth/oidc/github/start`);
    const stolen = new URL(first.callback);
    const mismatch = await open(jar, stolen.href);
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as any).error.details.state).toMatch(/does not match/);
  });
});
