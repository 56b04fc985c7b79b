import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError, validationError } from '../errors/apiError.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** JSON bodies up to 1 MB; a body of another content type, malformed JSON or a bigger body is refused (except where `passThrough` says a route reads its own body). */
export function jsonBody(limit = MAX_BODY_BYTES, passThrough: (req: Request) => boolean = () => false) {
  const parse = express.json({ limit, strict: false, type: ['application/json', 'application/*+json'] });
  return function jsonBody(req: Request, res: Response, next: NextFunction): void {
    if (req.method === 'GET' || req.method === 'HEAD' || passThrough(req)) return next();
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.is(['application/json', 'application/*+json'])) {
      return next(validationError({ 'content-type': 'must be application/json' }, 'Request body must be JSON'));
    }
    parse(req, res, (error?: unknown) => {
      if (!error) return next();
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large')
        return next(new ApiError('PAYLOAD_TOO_LARGE', `Request body is larger than ${limit} bytes`));
      if (type === 'entity.parse.failed')
        return next(validationError({ body: 'is not valid JSON' }, 'Malformed JSON body'));
      return next(validationError({ body: (error as Error).message }, 'Request body could not be read'));
    });
  };
}
