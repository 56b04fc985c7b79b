import { expect } from 'vitest';

/**
 * The admin console of an installed package answers without a front-end build: /admin is the
 * page once an administrator exists (made here through the /setup form's JSON), and the script
 * it names is served.
 */
export async function expectConsoleServed(url: string): Promise<void> {
  const setup = await fetch(`${url}/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Admin', email: 'admin@example.test', password: 'correct horse battery staple!' }),
  });
  expect(setup.status).toBeLessThan(400);
  const page = await fetch(`${url}/admin`);
  expect(page.status).toBe(200);
  const html = await page.text();
  const script = /<script type="module" crossorigin src="([^"]+)"/.exec(html)?.[1];
  expect(script).toMatch(/^\/admin\/assets\/index-[\w-]+\.js$/);
  const asset = await fetch(`${url}${script}`);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toContain('javascript');
}
