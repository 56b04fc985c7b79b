import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request, Router } from 'express';
import type { RuntimeContext } from '../context.js';
import { createOperation } from '../entities/create.js';
import { findVisible } from '../entities/requireAccess.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { MEDIA_ASSETS } from '../model/collections.js';
import { features } from './api/index.js';
import { DeclaredRouter } from './declaredRouter.js';
import { unstorableInput } from './refuseUnstorableInput.js';

export const MEDIA_PATH = `/api/v1/${MEDIA_ASSETS}`;
export const UPLOAD_PATH = features.upload.path;
/** Types a browser may show inline; anything else downloads as an attachment. */
const INLINE =
  /^(image\/(png|jpeg|gif|webp|avif)|application\/pdf|text\/plain|video\/(mp4|webm)|audio\/(mpeg|ogg|wav))$/;
const TEXT_FIELDS = ['altText', 'width', 'height', 'filename'];

interface Upload {
  path: string;
  filename: string;
  mimeType: string;
  size: number;
  fields: Record<string, string>;
}

/** Streams the multipart `file` part into the upload folder, bounded by maxBytes. */
function receive(req: Request, dir: string, maxBytes: number): Promise<Upload> {
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
    let written: string | undefined;
    let sinkClosed: Promise<void> | undefined;
    let source: (NodeJS.ReadableStream & { destroy(): void }) | undefined;
    parser.on('field', (name, value) => {
      if (TEXT_FIELDS.includes(name)) fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || upload) return void stream.resume();
      const month = new Date().toISOString().slice(0, 7);
      mkdirSync(join(dir, month), { recursive: true });
      const ext = extname(info.filename ?? '')
        .toLowerCase()
        .replace(/[^.a-z0-9]/g, '')
        .slice(0, 10);
      const path = join(dir, month, `${randomUUID()}${ext}`);
      written = path;
      source = stream;
      let size = 0;
      let truncated = false;
      stream.on('data', (chunk: Buffer) => (size += chunk.length));
      stream.on('limit', () => (truncated = true));
      const sink = createWriteStream(path, { mode: 0o640 });
      // The file is opened asynchronously: a stream destroyed early may still create it, so removal waits for 'close'.
      sinkClosed = new Promise((settle) => sink.once('close', () => settle()));
      upload = pipeline(stream, sink).then(() => {
        if (truncated) {
          rmSync(path, { force: true });
          throw new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${maxBytes} bytes`);
        }
        return {
          path,
          filename: (info.filename || 'upload').slice(0, 255),
          mimeType: info.mimeType || 'application/octet-stream',
          size,
          fields,
        };
      });
    });
    const unreadable = () => validationError({ body: 'is not a readable multipart body' }, 'Upload could not be read');
    let failing: Promise<void> | undefined;
    // Whatever goes wrong leaves nothing behind: stop the file, let its write settle, remove it, then answer.
    const fail = (error: unknown) =>
      (failing ??= (async () => {
        source?.destroy();
        await upload?.catch(() => undefined);
        await sinkClosed;
        if (written) rmSync(written, { force: true });
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
 * height) stores the file in the upload folder and creates the MediaAsset; GET /mediaAssets/{id}/file
 * answers the file to whoever may view the record. Deleting the record deletes the file.
 */
export function mediaRoutes(ctx: RuntimeContext, uploads: { dir: string; maxBytes: number }): Router {
  const router = new DeclaredRouter(MEDIA_PATH);
  router.raw(features.upload, async ({ req, res }) => {
    if (!req.is('multipart/form-data'))
      throw validationError({ 'content-type': 'must be multipart/form-data' }, 'Upload must be multipart/form-data');
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > uploads.maxBytes + 64 * 1024)
      throw new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${uploads.maxBytes} bytes`);
    const upload = await receive(req, uploads.dir, uploads.maxBytes);
    const unstorable = unstorableInput({ ...upload.fields, filename: upload.filename });
    if (unstorable) {
      rmSync(upload.path, { force: true });
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
        body: {
          filename: upload.fields.filename || upload.filename,
          mimeType: upload.mimeType,
          ...(upload.fields.altText ? { altText: upload.fields.altText } : {}),
          ...(number('width') !== undefined ? { width: number('width') } : {}),
          ...(number('height') !== undefined ? { height: number('height') } : {}),
        },
        serverFields: (doc) => ({
          size: upload.size,
          storagePath: upload.path,
          url: `/api/v1/${MEDIA_ASSETS}/${doc.id}/file`,
        }),
      });
      res.status(201).json({ data: created });
    } catch (error) {
      rmSync(upload.path, { force: true });
      throw error;
    }
  });

  router.raw(features.mediaFile, async ({ caller, params, res, next }) => {
    const asset = await findVisible(ctx, ctx.registry.entities.get(MEDIA_ASSETS)!.model, params.id, caller);
    if (typeof asset.storagePath !== 'string') throw new ApiError('NOT_FOUND', 'This media asset has no stored file');
    const mimeType = String(asset.mimeType);
    const disposition = INLINE.test(mimeType) ? 'inline' : 'attachment';
    res.setHeader(
      'Content-Disposition',
      `${disposition}; filename*=UTF-8''${encodeURIComponent(String(asset.filename))}`,
    );
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    res.sendFile(
      asset.storagePath,
      { headers: { 'Content-Type': INLINE.test(mimeType) ? mimeType : 'application/octet-stream' } },
      (error) => {
        if (error)
          next(
            (error as NodeJS.ErrnoException).code === 'ENOENT'
              ? new ApiError('NOT_FOUND', 'The stored file is missing')
              : error,
          );
      },
    );
  });
  return router.router;
}
