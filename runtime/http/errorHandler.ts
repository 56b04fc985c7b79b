import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { StoreUnavailable } from '../store/types.js';
import { ApiError } from './errors.js';

/** Writes every error as the spec's envelope; internal causes are logged with the correlation id, never sent. */
export function errorHandler(logger: Logger) {
  return function errorHandler(error: unknown, req: Request, res: Response, _next: NextFunction): void {
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if (error instanceof StoreUnavailable) {
      logger.error({ correlationId: req.correlationId, err: error }, 'database unavailable');
      apiError = new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly');
    } else {
      logger.error({ correlationId: req.correlationId, err: error, method: req.method, path: req.path }, 'unhandled error');
      apiError = new ApiError('INTERNAL_ERROR');
    }
    if (res.headersSent) return void res.end();
    res.status(apiError.status).json(apiError.toBody());
  };
}

/** Any path no route claimed: 404 in the error envelope. */
export function notFoundHandler(req: Request, res: Response): void {
  res.status(404).json(new ApiError('NOT_FOUND', `No route for ${req.method} ${req.path}`).toBody());
}
