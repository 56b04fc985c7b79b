import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startTestServer({}, { withAdmin: false });
  browser = await launchChromium();
}, 600_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the /setup page in a real browser', () => {
  it('is where a first visit lands; submitting it creates the admin and signs the browser in', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/api/v1/articles`);
    expect(new URL(page.url()).pathname).toBe('/setup');
    await page.fill('#name', 'Browser Admin');
    await page.fill('#email', 'browser@example.test');
    await page.fill('#password', 'short');
    await page.fill('#tenantName', 'First Org');
    await page.click('button[type=submit]');
    expect(await page.textContent('body')).toContain('at least 12 characters');
    // The mail settings can be checked from the page; the form keeps what was typed.
    await page.click('button.secondary');
    expect(await page.textContent('[role=status]')).toContain('No mail server is configured');
    expect(await page.inputValue('#email')).toBe('browser@example.test');
    expect(await page.inputValue('#tenantName')).toBe('First Org');

    await page.fill('#password', 'correct horse battery staple!');
    await Promise.all([page.waitForURL(`${server.url}/`), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).toContain('is set up');
    await Promise.all([page.waitForURL('**/api/v1/auth/me'), page.click('a[href="/api/v1/auth/me"]')]);
    const me = JSON.parse((await page.textContent('body'))!);
    expect(me).toMatchObject({
      user: { email: 'browser@example.test', displayName: 'Browser Admin' },
      roles: ['ADMIN'],
    });

    const cookie = (await page.context().cookies()).find((c) => c.name === 'entigen_uid')!;
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict' });
    const setupAgain = await page.goto(`${server.url}/setup`);
    expect(setupAgain!.status()).toBe(404);
  });
});

describe('the API reference page in a real browser', () => {
  it('opens clean: the document renders with no error or warning box and nothing in the console', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${server.url}/api/docs`);
    await page.waitForSelector('.swagger-ui .info .title', { timeout: 30_000 });
    await page.waitForSelector('.swagger-ui .opblock', { timeout: 30_000 });
    // swagger-ui shows schema and parser problems in an errors box at the top.
    expect(await page.locator('.swagger-ui .errors-wrapper').count()).toBe(0);
    expect(await page.textContent('.swagger-ui .info .title')).toContain(server.ctx.registry.model.app.name);
    expect(problems).toEqual([]);
  });
});
