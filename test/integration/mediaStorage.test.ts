import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { UploadsConfig } from '../../runtime/config/runtimeConfig.js';
import type { FileStorage } from '../../runtime/files/fileStorage.js';
import { checkResponse } from '../support/openApiCheck.js';
import { type S3Target, startS3 } from '../support/s3Server.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

/** A fetch whose answer is checked against the OpenAPI document (binary answers by their status). */
async function checked(server: TestServer, path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${server.url}${path}`, init);
  const type = response.headers.get('content-type');
  const body = type?.startsWith('application/json') ? await response.clone().json() : undefined;
  const problems = checkResponse(init.method ?? 'GET', path, response.status, type, body);
  if (problems.length > 0) throw new Error(`does not match the OpenAPI document: ${problems.join('; ')}`);
  return response;
}

async function upload(server: TestServer, token: string, bytes: Uint8Array, name: string, type: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const response = await checked(server, '/api/v1/mediaAssets/upload', {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { data: Record<string, any> }).data;
}

const keysOf = async (storage: FileStorage) => {
  const keys: string[] = [];
  for await (const key of storage.list()) keys.push(key);
  return keys.sort();
};

/** A 640 x 480 photo-like PNG: a gradient, so thumbnails have something to keep. */
const photo = () =>
  sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 10, g: 120, b: 200 } } })
    .composite([
      {
        input: Buffer.from(
          '<svg width="640" height="480"><rect x="100" y="80" width="300" height="200" fill="orange"/></svg>',
        ),
      },
    ])
    .png()
    .toBuffer();

describe.each(['local', 's3'] as const)('media files in %s storage', (driver) => {
  let s3: S3Target | undefined;
  let server: TestServer;
  let owner: { id: string; token: string };
  let uploads: UploadsConfig;
  const storage = () => server.ctx.media!.storage;

  beforeAll(async () => {
    if (driver === 's3') s3 = await startS3();
    uploads = s3
      ? s3.uploads(200_000, ['200x200', '100x100'])
      : {
          driver: 'local',
          dir: mkdtempSync(join(tmpdir(), 'entigen-uploads-')),
          maxBytes: 200_000,
          thumbnails: { sizes: ['200x200', '100x100'] },
        };
    server = await startTestServer(
      {},
      {
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          uploads,
          // Quick retries, so a failed file delete is seen retried within the test.
          hooks: { attempts: 20, backoffMs: 100, timeoutMs: 5_000, leaseMs: 5_000 },
        },
      },
    );
    owner = await server.user();
  });
  afterAll(async () => {
    await server?.close();
    await s3?.close();
  });

  it('streams a file in and out with its checksum, ETag, ranges and HEAD', async () => {
    const bytes = new Uint8Array(50_000).map((_, i) => (i * 7) % 256);
    const asset = await upload(server, owner.token, bytes, 'data.bin', 'application/octet-stream');
    expect(asset.size).toBe(50_000);
    expect(asset.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(asset).not.toHaveProperty('storagePath');
    expect(await keysOf(storage())).toEqual([`${asset.id}/file.bin`]);

    const auth = { authorization: `Bearer ${owner.token}` };
    const whole = await checked(server, asset.url, { headers: auth });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(whole.headers.get('content-length')).toBe('50000');
    expect(whole.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''data.bin");
    const etag = whole.headers.get('etag')!;
    expect(etag).toBe(`"${asset.sha256.slice(0, 32)}"`);
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(bytes);

    const again = await checked(server, asset.url, { headers: { ...auth, 'if-none-match': etag } });
    expect(again.status).toBe(304);

    const part = await checked(server, asset.url, { headers: { ...auth, range: 'bytes=1000-1009' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 1000-1009/50000');
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.slice(1000, 1010));
    const tail = await checked(server, asset.url, { headers: { ...auth, range: 'bytes=-5' } });
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(-5));
    // If-Range naming another version: the whole file.
    const stale = await checked(server, asset.url, {
      headers: { ...auth, range: 'bytes=0-9', 'if-range': '"something-else"' },
    });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();

    const beyond = await checked(server, asset.url, { headers: { ...auth, range: 'bytes=60000-' } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe('bytes */50000');
    expect(((await beyond.json()) as { error: { code: string } }).error.code).toBe('RANGE_NOT_SATISFIABLE');

    const head = await fetch(`${server.url}${asset.url}`, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('50000');
  });

  it('makes each thumbnail once, from the configured sizes only, and keeps it beside the file', async () => {
    const png = await photo();
    const asset = await upload(server, owner.token, png, 'photo.png', 'image/png');
    const auth = { authorization: `Bearer ${owner.token}` };

    const cover = await checked(server, `${asset.url}?thumb=200x200`, { headers: auth });
    expect(cover.status).toBe(200);
    expect(cover.headers.get('content-type')).toBe('image/png');
    expect(cover.headers.get('etag')).toBe(`"${asset.sha256.slice(0, 32)}-200x200-cover"`);
    const coverImage = await sharp(Buffer.from(await cover.arrayBuffer())).metadata();
    expect([coverImage.width, coverImage.height]).toEqual([200, 200]);

    const inside = await checked(server, `${asset.url}?thumb=200x200&fit=inside`, { headers: auth });
    const insideImage = await sharp(Buffer.from(await inside.arrayBuffer())).metadata();
    expect([insideImage.width, insideImage.height]).toEqual([200, 150]);

    expect(await keysOf(storage())).toEqual(
      expect.arrayContaining([
        `${asset.id}/file.png`,
        `${asset.id}/thumb-200x200-cover.png`,
        `${asset.id}/thumb-200x200-inside.png`,
      ]),
    );
    // Served again from the stored copy: removing the original does not matter any more.
    await storage().remove(`${asset.id}/file.png`);
    const stored = await checked(server, `${asset.url}?thumb=200x200`, { headers: auth });
    expect(stored.status).toBe(200);
    await stored.arrayBuffer();

    const odd = await checked(server, `${asset.url}?thumb=123x45`, { headers: auth });
    expect(odd.status).toBe(400);
    expect(((await odd.json()) as { error: { details: Record<string, string> } }).error.details).toEqual({
      thumb: 'must be one of 200x200, 100x100',
    });
    expect((await checked(server, `${asset.url}?fit=cover`, { headers: auth })).status).toBe(400);
    expect((await checked(server, `${asset.url}?thumb=200x200&fit=squash`, { headers: auth })).status).toBe(400);

    const text = await upload(server, owner.token, new TextEncoder().encode('not a picture'), 'a.txt', 'text/plain');
    expect((await checked(server, `${text.url}?thumb=100x100`, { headers: auth })).status).toBe(422);
    const fake = await upload(server, owner.token, new TextEncoder().encode('not a png'), 'b.png', 'image/png');
    const broken = await checked(server, `${fake.url}?thumb=100x100`, { headers: auth });
    expect(broken.status).toBe(422);
    expect(await keysOf(storage())).not.toContain(`${fake.id}/thumb-100x100-cover.png`);
  });

  it('removes the files with their record, through the event log', async () => {
    const png = await photo();
    const asset = await upload(server, owner.token, png, 'gone.png', 'image/png');
    const auth = { authorization: `Bearer ${owner.token}` };
    await (await checked(server, `${asset.url}?thumb=100x100`, { headers: auth })).arrayBuffer();
    const before = (await keysOf(storage())).filter((key) => key.startsWith(asset.id));
    expect(before).toHaveLength(2);
    const admin = await server.user({ roles: ['ADMIN'] });
    expect((await server.call('DELETE', `/api/v1/mediaAssets/${asset.id}`, { token: admin.token })).status).toBe(200);
    await vi.waitFor(async () => expect((await keysOf(storage())).filter((k) => k.startsWith(asset.id))).toEqual([]), {
      timeout: 10_000,
      interval: 50,
    });
  });

  it('keeps nothing of an upload that is refused', async () => {
    const before = await keysOf(storage());
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(300_000)]), 'big.bin');
    const big = await checked(server, '/api/v1/mediaAssets/upload', {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(big.status).toBe(413);
    const cut = await fetch(`${server.url}/api/v1/mediaAssets/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'multipart/form-data; boundary=XX' },
      body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello',
    });
    expect(cut.status).toBe(400);
    expect(await keysOf(storage())).toEqual(before);
  });

  // Only where the test can stop the storage: its own s3rver.
  if (driver === 's3' && !process.env.S3_TEST_URL)
    it('retries a file delete the storage refused until it is back, and answers 503 meanwhile', async () => {
      const asset = await upload(
        server,
        owner.token,
        new Uint8Array([1, 2, 3]),
        'retry.bin',
        'application/octet-stream',
      );
      await s3!.stop();
      try {
        const down = await checked(server, asset.url, { headers: { authorization: `Bearer ${owner.token}` } });
        expect(down.status).toBe(503);
        const admin = await server.user({ roles: ['ADMIN'] });
        expect((await server.call('DELETE', `/api/v1/mediaAssets/${asset.id}`, { token: admin.token })).status).toBe(
          200,
        );
        // The record is gone at once; the file's removal waits in the log.
        expect((await server.call('GET', `/api/v1/mediaAssets/${asset.id}`, { token: admin.token })).status).toBe(404);
        await vi.waitFor(
          async () => {
            const pending = await server.ctx.store.find('hookDeliveries', {
              where: { field: 'entityId', op: 'eq', value: asset.id },
            });
            expect(pending.map((d) => d.status)).toEqual(['pending']);
          },
          { timeout: 10_000, interval: 50 },
        );
      } finally {
        await s3!.start();
      }
      await vi.waitFor(
        async () => expect((await keysOf(storage())).filter((k) => k.startsWith(asset.id))).toEqual([]),
        { timeout: 15_000, interval: 100 },
      );
      await vi.waitFor(
        async () => {
          const [delivery] = await server.ctx.store.find('hookDeliveries', {
            where: { field: 'entityId', op: 'eq', value: asset.id },
          });
          expect(delivery.status).toBe('delivered');
        },
        { timeout: 10_000, interval: 50 },
      );
    });
});
