import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request, Router } from 'express';
import { features } from '../api/index.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { importRecords } from '../transfer/importRecords.js';
import { readSource } from '../transfer/readSource.js';
import { formatOf } from '../transfer/recordFormat.js';
import { DeclaredRouter } from './declaredRouter.js';
import { requestContext } from './requestTrace.js';

export const IMPORT_PATH = '/api/v1/import';
/** The largest file the console may import; larger ones go through `entigen import`. */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;
/** Refused lines an answer lists at most. */
const LISTED_ERRORS = 100;

/** Streams the multipart `file` part to a temporary file, bounded; its path and name. */
function receive(req: Request, dir: string): Promise<{ path: string; filename: string }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: MAX_IMPORT_BYTES, fields: 0, parts: 5 } });
    } catch {
      return reject(validationError({ body: 'must be multipart/form-data with a file part' }));
    }
    let saved: Promise<{ path: string; filename: string }> | undefined;
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || saved) return void stream.resume();
      let truncated = false;
      stream.on('limit', () => (truncated = true));
      const path = join(dir, 'upload');
      saved = pipeline(stream, createWriteStream(path)).then(() => {
        if (truncated)
          throw new ApiError(
            'PAYLOAD_TOO_LARGE',
            `The file is larger than ${MAX_IMPORT_BYTES} bytes; import it with entigen import`,
          );
        return { path, filename: info.filename ?? '' };
      });
    });
    parser.on('error', () => reject(validationError({ body: 'is not a readable multipart body' })));
    parser.on('close', () => {
      if (!saved) return reject(validationError({ file: 'is required' }, 'Import needs a file part named file'));
      saved.then(resolve, reject);
    });
    req.pipe(parser);
  });
}

/**
 * POST /api/v1/import/{entity} (administrators): the admin console's import, `entigen import` over
 * HTTP for files up to 50 MB. Owned records without an ownerId become the administrator's. Hooks
 * do not run and no events are logged, as with the CLI without --hooks.
 */
export function importRoutes(ctx: RuntimeContext): Router {
  return new DeclaredRouter(IMPORT_PATH).raw(features.importRecords, async ({ caller, params, query, req, res }) => {
    const entity = ctx.registry.entities.get(params.entity);
    if (!entity || entity.model.internal) throw notFound('Entity');
    if (!req.is('multipart/form-data'))
      throw validationError({ 'content-type': 'must be multipart/form-data' }, 'Import takes a multipart file');
    const dir = mkdtempSync(join(tmpdir(), 'entigen-import-'));
    try {
      const { path, filename } = await receive(req, dir);
      let format: 'jsonl' | 'csv';
      try {
        format = formatOf(filename, query.format);
      } catch {
        throw validationError({ format: 'must be jsonl or csv (the file name does not say)' });
      }
      const outcome = await importRecords({
        ctx: { ...requestContext(ctx, req), hooks: new Map(), origin: 'import' },
        entity: entity.model,
        validate: entity.validators.create,
        read: readSource(path, format, entity.model),
        dryRun: query.dryRun,
        continueOnError: query.continueOnError,
        owner: caller.user?.id,
        fromLine: query.fromLine,
      });
      const refused = outcome.errors.filter((error) => error.line > 0);
      res.json({
        data: {
          imported: outcome.imported,
          lines: outcome.lastLine,
          written: outcome.written,
          dryRun: query.dryRun === true,
          errors: refused.slice(0, LISTED_ERRORS),
          moreErrors: Math.max(0, outcome.errorCount - LISTED_ERRORS),
        },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }).router;
}
