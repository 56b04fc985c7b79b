import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
import { oidcProvider, testIdpConfig } from '../support/oidcProvider.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

let idp: Awaited<ReturnType<typeof oidcProvider>>;
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  idp = await oidcProvider({ browser: { email: 'browser@example.test', name: 'Browser User' } });
  server = await startTestServer(
    {},
    {
      overrides: {
        rateLimit: GENEROUS_LIMITS,
        oidc: [testIdpConfig(idp.issuer)],
      },
    },
  );
  idp.configure([`${server.url}/api/v1/auth/oidc/test/callback`]);
  browser = await launchChromium();
}, 600_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await idp?.close();
});

describe('OpenID Connect sign-in in a real browser', () => {
  it('goes to the provider, signs in, consents, and lands on returnTo with the session cookie', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/api/v1/auth/oidc/test/start?returnTo=/api/v1/auth/me`);
    // The provider's own sign-in page, then its consent page.
    expect(new URL(page.url()).origin).toBe(idp.issuer);
    await page.fill('input[name="login"]', 'browser');
    await page.fill('input[name="password"]', 'anything');
    await page.click('button[type="submit"]');
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    await page.click('button[type="submit"]');
    // Back at entigen: the callback's page goes on to returnTo, where the Strict session cookie is sent.
    await page.waitForURL(`${server.url}/api/v1/auth/me`);
    const me = JSON.parse((await page.textContent('body')) ?? '{}');
    expect(me.user).toMatchObject({ email: 'browser@example.test', displayName: 'Browser User', emailVerified: true });
    const cookies = await page.context().cookies(server.url);
    expect(cookies.find((cookie) => cookie.name === 'entigen_uid')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    await page.close();
  }, 60_000);
});
