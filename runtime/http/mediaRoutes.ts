import { createHash } from 'node:crypto';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request, Router } from 'express';
import { findVisible } from '../access/requireAccess.js';
import { features } from '../api/index.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { createOperation } from '../entities/create.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { type ByteRange, type FileStorage, originalKey } from '../files/fileStorage.js';
import type { MediaFiles } from '../files/mediaFiles.js';
import { thumbnailSpec, thumbnailType } from '../files/thumbnails.js';
import { MEDIA_ASSETS } from '../model/collections.js';
import { newId } from '../write/prepareWrite.js';
import { DeclaredRouter } from './declaredRouter.js';
import { unstorableInput } from './refuseUnstorableInput.js';
import { etagMatches } from './staticFile.js';

export const MEDIA_PATH = `/api/v1/${MEDIA_ASSETS}`;
export const UPLOAD_PATH = features.upload.path;
/** Types a browser may show inline; anything else downloads as an attachment. */
const INLINE =
  /^(image\/(png|jpeg|gif|webp|avif)|application\/pdf|text\/plain|video\/(mp4|webm)|audio\/(mpeg|ogg|wav))$/;
const TEXT_FIELDS = ['altText', 'width', 'height', 'filename'];

interface Upload {
  key: string;
  filename: string;
  mimeType: string;
  size: number;
  sha256: string;
  fields: Record<string, string>;
}

const unreadable = () => validationError({ body: 'is not a readable multipart body' }, 'Upload could not be read');
const storageDown = (error: unknown) =>
  new ApiError('SERVICE_UNAVAILABLE', 'The file storage did not take the file; try again', undefined, error);

/**
 * Streams the multipart `file` part into the storage under the asset's id, bounded by maxBytes,
 * counting and hashing it on the way. Whatever goes wrong leaves no file behind.
 */
function receive(req: Request, storage: FileStorage, id: string, maxBytes: number): Promise<Upload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: 1, fileSize: maxBytes, fields: 20, fieldSize: 10_000, parts: 30 },
      });
    } catch {
      return reject(
        validationError({ body: 'must be multipart/form-data with a file part' }, 'Upload must be multipart/form-data'),
      );
    }
    const fields: Record<string, string> = {};
    let upload: Promise<Upload> | undefined;
    let source: Readable | undefined;
    parser.on('field', (name, value) => {
      if (TEXT_FIELDS.includes(name)) fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || upload) return void stream.resume();
      source = stream;
      const filename = (info.filename || 'upload').slice(0, 255);
      const mimeType = info.mimeType || 'application/octet-stream';
      const key = originalKey(id, filename);
      const hash = createHash('sha256');
      let size = 0;
      let truncated = false;
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          hash.update(chunk);
          done(null, chunk);
        },
      });
      stream.on('limit', () => (truncated = true));
      stream.on('error', (error) => counted.destroy(error));
      // The storage's write reports it (it may not be listening yet when the client goes away).
      counted.on('error', () => undefined);
      stream.pipe(counted);
      upload = storage.put(key, counted, mimeType).then(
        async () => {
          if (!truncated) return { key, filename, mimeType, size, sha256: hash.digest('hex'), fields };
          await storage.removeAll(id);
          throw new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${maxBytes} bytes`);
        },
        async (error: unknown) => {
          await storage.removeAll(id).catch(() => undefined);
          throw failing ? unreadable() : storageDown(error);
        },
      );
    });
    let failing: Promise<void> | undefined;
    // Stop the file, let its write settle (it removes what it wrote), then answer.
    const fail = (error: unknown) =>
      (failing ??= (async () => {
        source?.destroy();
        await upload?.catch(() => undefined);
        reject(error instanceof ApiError ? error : unreadable());
      })());
    parser.on('error', () => void fail(unreadable()));
    parser.on('close', () => {
      if (failing) return;
      if (!upload) return reject(validationError({ file: 'is required' }, 'Upload needs a file part named file'));
      upload.then(resolve, (error: unknown) => void fail(error));
    });
    req.pipe(parser);
  });
}

/**
 * Feature `content`: POST /mediaAssets/upload (multipart, part `file`, optional altText, width,
 * height, filename) streams the file into the storage (uploads.driver: a folder or an S3 bucket)
 * and creates the MediaAsset; GET /mediaAssets/{id}/file streams it, or a thumbnail of it, to
 * whoever may view the record, with its ETag and ranges. Deleting the record deletes its files.
 */
export function mediaRoutes(ctx: RuntimeContext, media: MediaFiles): Router {
  const router = new DeclaredRouter(MEDIA_PATH);
  const { storage } = media;
  router.raw(features.upload, async ({ req, res }) => {
    if (!req.is('multipart/form-data'))
      throw validationError({ 'content-type': 'must be multipart/form-data' }, 'Upload must be multipart/form-data');
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > media.maxBytes + 64 * 1024)
      throw new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${media.maxBytes} bytes`);
    // The record's id names the file's place, so the file can go in before the record exists.
    const id = newId();
    const upload = await receive(req, storage, id, media.maxBytes);
    const discard = () => storage.removeAll(id).catch(() => undefined);
    const unstorable = unstorableInput({ ...upload.fields, filename: upload.filename });
    if (unstorable) {
      await discard();
      throw unstorable;
    }
    const number = (name: string) => {
      const text = upload.fields[name];
      return text === undefined || text === '' ? undefined : /^\d{1,9}$/.test(text) ? Number(text) : text;
    };
    try {
      const created = await createOperation({
        ctx,
        plural: MEDIA_ASSETS,
        caller: req.caller,
        id,
        body: {
          filename: upload.fields.filename || upload.filename,
          mimeType: upload.mimeType,
          ...(upload.fields.altText ? { altText: upload.fields.altText } : {}),
          ...(number('width') !== undefined ? { width: number('width') } : {}),
          ...(number('height') !== undefined ? { height: number('height') } : {}),
        },
        serverFields: (doc) => ({
          size: upload.size,
          sha256: upload.sha256,
          storagePath: upload.key,
          url: `/api/v1/${MEDIA_ASSETS}/${doc.id}/file`,
        }),
      });
      res.status(201).json({ data: created });
    } catch (error) {
      await discard();
      throw error;
    }
  });

  router.raw(features.mediaFile, async ({ caller, params, query, req, res }) => {
    const asset = await findVisible(ctx, ctx.registry.entities.get(MEDIA_ASSETS)!.model, params.id, caller);
    if (typeof asset.storagePath !== 'string') throw new ApiError('NOT_FOUND', 'This media asset has no stored file');
    const spec = thumbnailSpec(query.thumb, query.fit, media.sizes);
    const original = String(asset.mimeType);
    const key = spec
      ? await media.thumbnails.ensure(asset.storagePath, asset.id, original, spec).catch(unavailable)
      : asset.storagePath;
    const mimeType = spec ? thumbnailType(original)! : original;
    const inline = INLINE.test(mimeType);
    res.setHeader(
      'Content-Disposition',
      `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(String(asset.filename))}`,
    );
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    // Revalidated on every use (access may change); its bytes and ranges are the file's, never compressed on the way.
    res.setHeader('Cache-Control', 'private, no-cache, no-transform');
    res.setHeader('Content-Type', inline ? mimeType : 'application/octet-stream');
    res.setHeader('Accept-Ranges', 'bytes');
    const etag =
      typeof asset.sha256 === 'string'
        ? `"${asset.sha256.slice(0, 32)}${spec ? `-${spec.width}x${spec.height}-${spec.fit}` : ''}"`
        : undefined;
    if (etag) {
      res.setHeader('ETag', etag);
      if (etagMatches(req.headers['if-none-match'], etag)) return void res.status(304).end();
    }
    const size = await storage.size(key).catch(unavailable);
    if (size === undefined) throw new ApiError('NOT_FOUND', 'The stored file is missing');
    const range = requestedRange(req, size, etag);
    const file = await storage.get(key, range).catch(unavailable);
    if (!file) throw new ApiError('NOT_FOUND', 'The stored file is missing');
    if (range) {
      res.status(206);
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    }
    res.setHeader('Content-Length', range ? range.end - range.start + 1 : size);
    if (req.method === 'HEAD') {
      file.body.destroy();
      return void res.end();
    }
    // Once the first bytes are out, a failure can only cut the answer short.
    await pipeline(file.body, res).catch((error: unknown) => {
      if (!res.headersSent) throw unavailable(error);
      res.destroy();
    });
  });
  return router.router;
}

/** A storage that does not answer is a 503, not a 500: the request may be tried again. */
function unavailable(error: unknown): never {
  if (error instanceof ApiError) throw error;
  throw new ApiError('SERVICE_UNAVAILABLE', 'The file storage is not answering; try again', undefined, error);
}

/**
 * The one range of a `Range: bytes=...` header (If-Range, when sent, must name the current ETag).
 * A range past the end answers 416; several ranges, or a header that is not bytes, the whole file.
 */
function requestedRange(req: Request, size: number, etag: string | undefined): ByteRange | undefined {
  if (req.headers.range === undefined) return undefined;
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const ranges = req.range(size, { combine: true });
  if (ranges === -1) {
    const error = new ApiError('RANGE_NOT_SATISFIABLE', `The file has ${size} bytes`);
    req.res?.setHeader('Content-Range', `bytes */${size}`);
    throw error;
  }
  if (ranges === -2 || ranges === undefined || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0].start, end: ranges[0].end };
}
