import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsSiteBuilt, docsSiteRoutes } from '../../runtime/http/docsSiteRoutes.js';
import { errorHandler } from '../../runtime/http/errorHandler.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('the documentation site at /docs', () => {
  let site: ReturnType<typeof express.application.listen>;
  let base: string;
  let server: TestServer;

  beforeAll(async () => {
    // A site folder of its own, so that what is served does not depend on a built site here.
    const root = mkdtempSync(join(tmpdir(), 'entigen-site-'));
    const folder = join(root, 'dist');
    mkdirSync(join(folder, 'guide'), { recursive: true });
    mkdirSync(join(folder, 'assets'));
    writeFileSync(join(folder, 'index.html'), '<h1>home</h1>');
    writeFileSync(join(folder, 'guide', 'deployment.html'), '<h1 id="checklist">Deployment</h1>');
    writeFileSync(join(folder, 'assets', 'app.abc123.js'), 'console.log(1)');
    writeFileSync(join(root, 'secret.txt'), 'not part of the site');
    const app = express();
    app.use('/docs', docsSiteRoutes(folder));
    app.use(errorHandler(pino({ level: 'silent' })));
    site = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => site.once('listening', resolve));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    server = await startTestServer();
  });
  afterAll(async () => {
    site.close();
    await server.close();
  });

  it('serves pages by clean URLs and hashed assets for good, with a policy of its own', async () => {
    const home = await fetch(`${base}/docs/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toContain('text/html');
    expect(home.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await home.text()).toBe('<h1>home</h1>');
    const page = await fetch(`${base}/docs/guide/deployment`);
    expect(await page.text()).toContain('Deployment');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const asset = await fetch(`${base}/docs/assets/app.abc123.js`);
    expect(asset.headers.get('content-type')).toContain('javascript');
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  it('answers 404 in the envelope for a missing page and for any path out of the site', async () => {
    for (const path of ['/docs/nowhere', '/docs/../secret.txt', '/docs/%2e%2e/secret.txt', '/docs/..%2fsecret.txt']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).not.toContain('not part of the site');
    }
    const missing = await fetch(`${base}/docs/nowhere`);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });

  it('is mounted by the server: the built site, or a 404 that says how to build it', async () => {
    const res = await server.call('GET', '/docs/');
    if (docsSiteBuilt()) {
      expect(res.status).toBe(200);
      expect(res.body).toContain('entigen');
    } else {
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain('npm run docs:build');
    }
    expect((await server.call('POST', '/docs/')).status).toBe(405);
  });
});
