import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { checkResponse } from '../support/openApiCheck.js';
import { openSse } from '../support/sse.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as they came over the wire. */
  wire: Buffer;
  /** Decoded by Content-Encoding. */
  text: string;
}

/** node:http, which leaves Content-Encoding to the caller: the test sees the bytes sent. */
function get(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    request({ host: url.hostname, port: url.port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const wire = Buffer.concat(chunks);
        const encoding = res.headers['content-encoding'];
        const text = (
          encoding === 'br' ? brotliDecompressSync(wire) : encoding === 'gzip' ? gunzipSync(wire) : wire
        ).toString('utf8');
        const type = res.headers['content-type'] ?? null;
        if (type?.startsWith('application/json')) {
          const problems = checkResponse('GET', path, res.statusCode!, type, JSON.parse(text));
          if (problems.length > 0) return reject(new Error(`does not match the OpenAPI document: ${problems}`));
        }
        resolve({ status: res.statusCode!, headers: res.headers, wire, text });
      });
    })
      .on('error', reject)
      .end();
  });
}

const varyOf = (answer: RawAnswer) => String(answer.headers.vary ?? '').toLowerCase();

describe('compression', () => {
  let server: TestServer;
  let owner: { id: string; token: string };
  beforeAll(async () => {
    const uploads = mkdtempSync(join(tmpdir(), 'entigen-uploads-'));
    server = await startTestServer(
      {},
      {
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          uploads: { driver: 'local', dir: uploads, maxBytes: 100_000, thumbnails: { sizes: [] } },
        },
      },
    );
    owner = await server.user();
    for (let i = 0; i < 30; i++)
      await server.call('POST', '/api/v1/articles', {
        token: owner.token,
        body: { title: `Article number ${i}`, body: 'Some words that repeat. '.repeat(10) },
      });
  });
  afterAll(() => server.close());

  it('sends JSON lists as brotli or gzip, as the client prefers, with Vary', async () => {
    const auth = { authorization: `Bearer ${owner.token}` };
    const plain = await get(server, '/api/v1/articles?limit=30', auth);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.wire.length).toBeGreaterThan(1024);

    const br = await get(server, '/api/v1/articles?limit=30', { ...auth, 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(varyOf(br)).toContain('accept-encoding');
    expect(JSON.parse(br.text)).toEqual(JSON.parse(plain.text));
    expect(br.wire.length).toBeLessThan(plain.wire.length / 4);

    const gzip = await get(server, '/api/v1/articles?limit=30', { ...auth, 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gzip.text)).toEqual(JSON.parse(plain.text));

    const refused = await get(server, '/api/v1/articles?limit=30', { ...auth, 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('leaves answers under 1 KB as they are', async () => {
    const one = await get(server, '/api/health', { 'accept-encoding': 'br, gzip' });
    expect(one.status).toBe(200);
    expect(one.wire.length).toBeLessThan(1024);
    expect(one.headers['content-encoding']).toBeUndefined();
  });

  it('serves the reference page and console assets from their precompressed copies, with ETags', async () => {
    const bundle = await get(server, '/api/docs/assets/swagger-ui-bundle.js', { 'accept-encoding': 'gzip, br' });
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-encoding']).toBe('br');
    expect(bundle.headers['content-type']).toMatch(/^application\/javascript/);
    expect(bundle.headers['cache-control']).toBe('public, max-age=3600');
    expect(varyOf(bundle)).toContain('accept-encoding');
    // Byte for byte the copy the build wrote: nothing was compressed per request.
    expect(bundle.wire.equals(readFileSync(join(packageRoot, 'dist/static/swagger-ui/swagger-ui-bundle.js.br')))).toBe(
      true,
    );
    expect(bundle.wire.length).toBeLessThan(bundle.text.length / 4);
    const again = await get(server, '/api/docs/assets/swagger-ui-bundle.js', {
      'accept-encoding': 'br',
      'if-none-match': String(bundle.headers.etag),
    });
    expect(again.status).toBe(304);
    expect(again.wire.length).toBe(0);

    const gzipOnly = await get(server, '/api/docs/assets/swagger-ui.css', { 'accept-encoding': 'gzip' });
    expect(gzipOnly.headers['content-encoding']).toBe('gzip');
    expect(gzipOnly.text).toContain('.swagger-ui');

    const page = await get(server, '/admin');
    const script = /src="\/admin\/assets\/([^"]+\.js)"/.exec(page.text)![1];
    const asset = await get(server, `/admin/assets/${script}`, { 'accept-encoding': 'br' });
    expect(asset.headers['content-encoding']).toBe('br');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.text).toBe(readFileSync(join(packageRoot, 'admin/build/assets', script), 'utf8'));
  });

  it('never compresses event streams or stored media files', async () => {
    const stream = await openSse(`${server.url}/api/v1/realtime?entities=articles`, {
      token: owner.token,
      headers: { 'accept-encoding': 'gzip, br' },
    });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-encoding')).toBeNull();
      await server.call('POST', '/api/v1/articles', { token: owner.token, body: { title: 'Live', body: 'b' } });
      expect((await stream.next((event) => event.event === 'articles.created')).data.title).toBe('Live');
    } finally {
      stream.close();
    }

    const form = new FormData();
    form.append('file', new Blob(['plain text that compresses well. '.repeat(200)], { type: 'text/plain' }), 'a.txt');
    const uploaded = await fetch(`${server.url}/api/v1/mediaAssets/upload`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(uploaded.status).toBe(201);
    const { url } = ((await uploaded.json()) as { data: { url: string } }).data;
    const file = await get(server, url, { authorization: `Bearer ${owner.token}`, 'accept-encoding': 'gzip, br' });
    expect(file.status).toBe(200);
    expect(file.headers['content-encoding']).toBeUndefined();
    expect(file.wire.length).toBe(6600);
  });
});

describe('compression turned off', () => {
  it('sends everything as it is', async () => {
    const server = await startTestServer({ COMPRESSION: 'false' });
    try {
      const owner = await server.user();
      for (let i = 0; i < 10; i++)
        await server.call('POST', '/api/v1/articles', {
          token: owner.token,
          body: { title: `Article ${i}`, body: 'words '.repeat(50) },
        });
      const list = await get(server, '/api/v1/articles', {
        authorization: `Bearer ${owner.token}`,
        'accept-encoding': 'br, gzip',
      });
      expect(list.wire.length).toBeGreaterThan(1024);
      expect(list.headers['content-encoding']).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
