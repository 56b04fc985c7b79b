import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { DOCS_PATH, docsRoutes } from './docsRoutes.js';

const DOCUMENT = { openapi: '3.1.0', info: { title: 'Shop', version: '1' }, paths: {} };
const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((closed) => server.close(closed))));
});

/** The docs routes alone, on a real port: what `load` is asked for is counted. */
async function serve(load: () => Promise<unknown>): Promise<string> {
  const app = express();
  app.use(DOCS_PATH, docsRoutes(load, 'Shop'));
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('docsRoutes', () => {
  it('loads the OpenAPI document when it is first asked for, once, and answers it with an ETag', async () => {
    let loads = 0;
    const url = await serve(async () => {
      loads++;
      return DOCUMENT;
    });
    expect((await fetch(`${url}/api/docs`)).status).toBe(200);
    expect((await fetch(`${url}/api/docs/assets/swagger-ui.css`)).status).toBe(200);
    expect(loads).toBe(0);
    const answers = await Promise.all([1, 2, 3].map(() => fetch(`${url}/api/docs/openapi.json`)));
    expect(loads).toBe(1);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('no-cache');
      expect(await answer.json()).toEqual(DOCUMENT);
    }
    const etag = answers[0]!.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    const again = await fetch(`${url}/api/docs/openapi.json`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(loads).toBe(1);
  });

  it('tries a load that failed again on the next request', async () => {
    let loads = 0;
    const url = await serve(async () => {
      if (++loads === 1) throw new Error('not readable yet');
      return DOCUMENT;
    });
    expect((await fetch(`${url}/api/docs/openapi.json`)).status).toBe(500);
    const answer = await fetch(`${url}/api/docs/openapi.json`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual(DOCUMENT);
    expect(loads).toBe(2);
  });

  it('serves only the reference page assets it names', async () => {
    const url = await serve(async () => DOCUMENT);
    for (const name of ['__proto__', 'constructor', 'package.json', '..%2Fpackage.json'])
      expect((await fetch(`${url}/api/docs/assets/${name}`)).status, name).toBe(404);
    const bundle = await fetch(`${url}/api/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });
});
