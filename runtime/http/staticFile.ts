import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Request, Response } from 'express';
import Negotiator from 'negotiator';

/** An asset held in memory with its precompressed copies (scripts/precompress.mjs writes them at build). */
export interface StaticFile {
  type: string;
  body: Buffer;
  encoded: { br?: Buffer; gzip?: Buffer };
  etag: string;
}

type Encoding = 'br' | 'gzip' | 'identity';
const ENCODINGS: Encoding[] = ['br', 'gzip', 'identity'];
// negotiator 1.x takes the server's preference for ties; its published types predate that.
type Negotiating = { encoding(available: string[], options: { preferred: string[] }): string | undefined };

/**
 * Reads `path`, and `<name>.br` / `<name>.gz` from `compressedFolder` (default: beside it). A copy
 * is used only if it decompresses to the file as it is now: a stale copy is never sent.
 */
export function readStaticFile(path: string, type: string, compressedFolder?: string): StaticFile {
  const body = readFileSync(path);
  const copy = (suffix: string, decode: (data: Buffer) => Buffer) => {
    const candidate = join(compressedFolder ?? dirname(path), `${basename(path)}${suffix}`);
    if (!existsSync(candidate)) return undefined;
    const data = readFileSync(candidate);
    try {
      return decode(data).equals(body) ? data : undefined;
    } catch {
      return undefined;
    }
  };
  return staticBody(body, type, { br: copy('.br', brotliDecompressSync), gzip: copy('.gz', gunzipSync) });
}

/** An answer made in memory, served as a static file: its ETag is a hash of the body. */
export function staticBody(body: Buffer, type: string, encoded: StaticFile['encoded'] = {}): StaticFile {
  return { type, body, encoded, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Answers a static file: the smallest encoding the client accepts (Vary: Accept-Encoding), an
 * ETag, and 304 for a matching If-None-Match. A file without precompressed copies goes out as it
 * is, and the compression layer compresses it on the way like any other answer.
 */
export function sendStaticFile(req: Request, res: Response, file: StaticFile, cacheControl: string): void {
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('ETag', file.etag);
  res.vary('Accept-Encoding');
  res.type(file.type);
  if (etagMatches(req.headers['if-none-match'], file.etag)) return void res.status(304).end();
  const available = ENCODINGS.filter((encoding) => encoding === 'identity' || file.encoded[encoding]);
  const chosen = (new Negotiator(req) as unknown as Negotiating).encoding(available, { preferred: ENCODINGS });
  const encoded = chosen === 'br' || chosen === 'gzip' ? file.encoded[chosen] : undefined;
  if (encoded) res.setHeader('Content-Encoding', chosen!);
  res.send(encoded ?? file.body);
}

/** Whether an If-None-Match header names this ETag (or `*`); weak tags compare by their value. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
