import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../runtime/auth/totp.js';
import { launchChromium } from '../support/browser.js';
import { ConsoleWatch } from '../support/consoleWatch.js';
import { oidcProvider, testIdpConfig } from '../support/oidcProvider.js';
import { type Slapd, startSlapd } from '../support/slapd.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

// Every way into the admin console, in headless Chromium: LDAP (by keyboard alone), the
// two-factor step of an account with TOTP, and an OpenID provider (a real oidc-provider).

const PASSWORD = 'correct horse battery staple!';
let idp: Awaited<ReturnType<typeof oidcProvider>>;
let slapd: Slapd;
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  idp = await oidcProvider({ visitor: { email: 'visitor@example.test', name: 'Visiting Person' } });
  slapd = await startSlapd();
  server = await startTestServer(
    { LDAP_URL: slapd.url, LDAP_BASE_DN: slapd.baseDN },
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
  slapd?.stop();
});

async function consolePage(): Promise<{ page: Page; watch: ConsoleWatch; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const watch = new ConsoleWatch(page, undefined, server.url);
  await page.goto(`${server.url}/admin`);
  await page.waitForSelector('#signin-title');
  return { page, watch, close: () => context.close() };
}

describe('signing in to the admin console', () => {
  it('through LDAP, with the keyboard alone, then skips to the content', async () => {
    const { page, watch, close } = await consolePage();
    await page.focus('input[name=authType][value=password]');
    await page.keyboard.press('ArrowRight');
    expect(await page.isChecked('input[name=authType][value=ldap]')).toBe(true);
    expect(await page.textContent('label:has(#email)')).toContain('User name or email');
    await page.keyboard.press('Tab');
    await page.keyboard.type('alice');
    await page.keyboard.press('Tab');
    await page.keyboard.type('alice-secret');
    await page.keyboard.press('Enter');
    await page.waitForSelector('h1:has-text("Welcome, Alice Liddell")');
    // The first Tab reaches the skip link, which moves focus past the navigation.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('content');
    expect(await watch.accessibility()).toEqual([]);
    expect(await watch.settled()).toEqual([]);
    await close();
  });

  it('with the second step of an account with TOTP: a wrong code is said, a recovery code lets in', async () => {
    const registered = await server.call('POST', '/api/v1/auth/register', {
      body: { email: 'twofactor@example.test', password: PASSWORD, displayName: 'Two Factor' },
    });
    const token = registered.body.token;
    const enrolled = await server.call('POST', '/api/v1/auth/mfa/enroll', {
      token,
      body: { currentPassword: PASSWORD },
    });
    const confirmed = await server.call('POST', '/api/v1/auth/mfa/confirm', {
      token,
      body: { code: totpCode(enrolled.body.secret, Date.now()) },
    });
    expect(confirmed.status).toBe(200);

    const { page, watch, close } = await consolePage();
    await page.fill('#email', 'twofactor@example.test');
    await page.fill('#password', PASSWORD);
    await page.click('form button[type=submit]');
    await page.waitForSelector('#code');
    await page.fill('#code', '000000');
    await page.click('form button[type=submit]');
    await expect.poll(() => page.locator('[role=alert]').textContent()).toMatch(/code/i);
    await watch.screenshot('20-two-factor');
    await page.fill('#code', confirmed.body.recoveryCodes[0]);
    await page.click('form button[type=submit]');
    await page.waitForSelector('h1:has-text("Welcome, Two Factor")');
    expect(await watch.settled()).toEqual([]);
    await close();
  });

  it('through an OpenID provider, back in the console', async () => {
    const { page, watch, close } = await consolePage();
    await page.click('a:has-text("Continue with Test IdP")');
    expect(new URL(page.url()).origin).toBe(idp.issuer);
    await page.fill('input[name="login"]', 'visitor');
    await page.fill('input[name="password"]', 'anything');
    await page.click('button[type="submit"]');
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    await page.click('button[type="submit"]');
    await page.waitForURL(`${server.url}/admin`);
    await page.waitForSelector('h1:has-text("Welcome, Visiting Person")');
    expect(await watch.settled()).toEqual([]);
    await close();
  }, 60_000);
});
