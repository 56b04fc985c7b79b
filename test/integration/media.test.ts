import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

const uploadDir = mkdtempSync(join(tmpdir(), 'entigen-uploads-'));
let server: TestServer;
let owner: { id: string; token: string };

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      overrides: {
        rateLimit: GENEROUS_LIMITS,
        uploads: { driver: 'local', dir: uploadDir, maxBytes: 1000, thumbnails: { sizes: ['200x200'] } },
      },
    },
  );
  owner = await server.user();
});
afterAll(() => server.close());

const upload = (
  token: string | undefined,
  file: Blob | undefined,
  name = 'pixel.png',
  fields: Record<string, string> = {},
) => {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  if (file) form.append('file', file, name);
  return fetch(`${server.url}/api/v1/mediaAssets/upload`, {
    method: 'POST',
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
};
const files = () => readdirSync(uploadDir, { recursive: true }).filter((f) => String(f).includes('.'));

describe('media assets (feature content)', () => {
  it('stores an uploaded file in the upload folder, creates the record, serves the file to viewers and deletes it after the record', async () => {
    const bytes = new Uint8Array([137, 80, 78, 71, 1, 2, 3, 4]);
    const response = await upload(owner.token, new Blob([bytes], { type: 'image/png' }), 'pixel.png', {
      altText: 'A pixel',
      width: '1',
      height: '1',
    });
    expect(response.status).toBe(201);
    const asset = ((await response.json()) as { data: Record<string, unknown> }).data;
    expect(asset).toMatchObject({
      filename: 'pixel.png',
      mimeType: 'image/png',
      size: 8,
      altText: 'A pixel',
      width: 1,
      height: 1,
      ownerId: owner.id,
      url: `/api/v1/mediaAssets/${asset.id}/file`,
    });
    expect(asset).not.toHaveProperty('storagePath');
    expect(files()).toHaveLength(1);

    const file = await fetch(`${server.url}${asset.url}`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);
    const stranger = await server.user();
    expect(
      (await fetch(`${server.url}${asset.url}`, { headers: { authorization: `Bearer ${stranger.token}` } })).status,
    ).toBe(404);

    const listed = await server.call('GET', '/api/v1/mediaAssets?mimeType=image/png', { token: owner.token });
    expect(listed.body.data.items.map((a: { id: string }) => a.id)).toEqual([asset.id]);
    const admin = await server.user({ roles: ['ADMIN'] });
    expect((await server.call('DELETE', `/api/v1/mediaAssets/${asset.id}`, { token: admin.token })).status).toBe(200);
    // After the commit, through the event log.
    await vi.waitFor(() => expect(files()).toHaveLength(0), { timeout: 10_000, interval: 50 });
  });

  it('refuses a too large file (413, nothing kept), a missing file part, a JSON body and anonymous callers', async () => {
    const big = await upload(
      owner.token,
      new Blob([new Uint8Array(5000)], { type: 'application/octet-stream' }),
      'big.bin',
    );
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    const missing = await upload(owner.token, undefined, 'x', { altText: 'no file' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { details: Record<string, string> } }).error.details).toHaveProperty(
      'file',
    );
    expect(
      (await server.call('POST', '/api/v1/mediaAssets/upload', { token: owner.token, body: { filename: 'x' } })).status,
    ).toBe(400);
    expect((await upload(undefined, new Blob([new Uint8Array(3)]), 'a.txt')).status).toBe(401);
    const nul = await upload(owner.token, new Blob([new Uint8Array(3)]), 'a.txt', { altText: 'a\u0000b' });
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { error: { details: Record<string, string> } }).error.details).toEqual({
      altText: 'must not contain the NUL character (U+0000)',
    });
    // A body cut short, many times over: the file may be opened after the parser fails, and must still go.
    for (let attempt = 0; attempt < 25; attempt++) {
      const cut = await fetch(`${server.url}/api/v1/mediaAssets/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'multipart/form-data; boundary=XX' },
        body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello',
      });
      expect(cut.status).toBe(400);
      expect(files()).toHaveLength(0);
    }
    expect(existsSync(uploadDir)).toBe(true);
  });
});
