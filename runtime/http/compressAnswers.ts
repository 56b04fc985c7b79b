import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync, type ZlibOptions } from 'node:zlib';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import Negotiator from 'negotiator';

/** Answers smaller than this go out as they are: compressing them saves less than it costs. */
export const COMPRESSION_THRESHOLD = 1024;
/** Larger answers are compressed off the event loop (zlib's thread pool), so no request waits on another's. */
const SYNC_LIMIT = 64 * 1024;

const COMPRESSIBLE =
  /^(application\/(json|javascript|xml|[\w.+-]+\+json|[\w.+-]+\+xml)|text\/(?!event-stream)[\w.+-]+|image\/svg\+xml)\s*(;|$)/i;
const NO_TRANSFORM = /(^|,)\s*no-transform\s*(,|$)/i;
const ENCODINGS = ['br', 'gzip', 'identity'];
// negotiator 1.x takes the server's preference for ties; its published types predate that.
type End = (this: Response, chunk?: unknown, encoding?: unknown, callback?: unknown) => Response;
type Negotiating = { encoding(available: string[], options: { preferred: string[] }): string | undefined };

// Quick settings for answers made per request (a list of 25 records in about 12 microseconds): brotli
// quality 1 with a window as large as the answer (up to 256 KB: a larger window than the answer
// compresses no better and costs its allocation), gzip level 3.
const brotliOptions = (size: number) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 1,
    [constants.BROTLI_PARAM_LGWIN]: Math.min(
      18,
      Math.max(constants.BROTLI_MIN_WINDOW_BITS, Math.ceil(Math.log2(size))),
    ),
    [constants.BROTLI_PARAM_SIZE_HINT]: size,
  },
});
const GZIP: ZlibOptions = { level: 3 };

/**
 * gzip or brotli (whichever the client prefers, brotli on a tie) for JSON and text answers of
 * 1 KB or more. Only an answer sent whole (`res.json`, `res.send`) is compressed: a streamed one
 * (event streams, media files, downloads) never is, nor what is already encoded (precompressed
 * static files) or marked `Cache-Control: no-transform`. A request without Accept-Encoding costs
 * nothing; one with it, a look at the answer as it ends.
 */
export function compressAnswers(): RequestHandler {
  return function compressAnswers(req: Request, res: Response, next: NextFunction): void {
    const accepted = req.headers['accept-encoding'];
    if (accepted === undefined || req.method === 'HEAD') return next();
    const end = res.end as unknown as End;
    res.end = function compressedEnd(this: Response, chunk?: unknown, encoding?: unknown, callback?: unknown) {
      res.end = end as unknown as Response['end'];
      const body = compressibleBody(this, chunk, encoding);
      const chosen = body && encodingFor(accepted);
      if (!body || !chosen) return end.call(this, chunk, encoding, callback);
      const finish = (compressed: Buffer) => {
        this.setHeader('Content-Encoding', chosen);
        this.setHeader('Content-Length', compressed.length);
        const vary = this.getHeader('Vary');
        this.setHeader('Vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding');
        // As a latin1 string, Node sends the headers and the body in one write instead of two.
        end.call(this, compressed.toString('latin1'), 'latin1', callback);
      };
      if (body.length <= SYNC_LIMIT) {
        finish(chosen === 'br' ? brotliCompressSync(body, brotliOptions(body.length)) : gzipSync(body, GZIP));
        return this;
      }
      const done = (error: Error | null, compressed: Buffer) =>
        error ? end.call(this, body, callback) : finish(compressed);
      if (chosen === 'br') brotliCompress(body, brotliOptions(body.length), done);
      else gzip(body, GZIP, done);
      return this;
    } as unknown as Response['end'];
    next();
  };
}

/** Clients send a handful of distinct Accept-Encoding values: each is negotiated once. */
const chosenFor = new Map<string, 'br' | 'gzip' | undefined>();

function encodingFor(accepted: string): 'br' | 'gzip' | undefined {
  if (chosenFor.has(accepted)) return chosenFor.get(accepted);
  const chosen = (new Negotiator({ headers: { 'accept-encoding': accepted } }) as unknown as Negotiating).encoding(
    ENCODINGS,
    { preferred: ENCODINGS },
  );
  const result = chosen === 'br' || chosen === 'gzip' ? chosen : undefined;
  if (chosenFor.size >= 256) chosenFor.clear();
  chosenFor.set(accepted, result);
  return result;
}

/** The whole answer as bytes, when it is one the client should get compressed. */
function compressibleBody(res: Response, chunk: unknown, encoding: unknown): Buffer | undefined {
  if (res.headersSent || chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
  if (res.statusCode < 200 || res.statusCode === 204 || res.statusCode === 304) return undefined;
  if (res.getHeader('Content-Encoding') !== undefined) return undefined;
  const type = res.getHeader('Content-Type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return undefined;
  const cacheControl = res.getHeader('Cache-Control');
  if (typeof cacheControl === 'string' && NO_TRANSFORM.test(cacheControl)) return undefined;
  // A string's length in UTF-16 units is at most its length in bytes: a quick, safe bound.
  if (typeof chunk === 'string')
    return chunk.length < COMPRESSION_THRESHOLD
      ? undefined
      : Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (!(chunk instanceof Uint8Array) || chunk.length < COMPRESSION_THRESHOLD) return undefined;
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
}
