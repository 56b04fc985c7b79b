import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, ERROR_CODES, type ErrorCode } from '../errors/apiError.js';
import { QueryTooLarge, StoreUnavailable } from '../store/types.js';
import { requestTraceFields } from './requestTrace.js';
import { recordRequestError } from './traceRequests.js';

/** Client errors raised inside Express or its parsers carry a 4xx status; they keep it, in our envelope. */
function fromClientError(error: unknown): ApiError | undefined {
  const status = (error as { status?: unknown })?.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  // The router could not decode a path parameter: no such resource, as for a malformed id.
  if (error instanceof URIError) return new ApiError('NOT_FOUND', 'Resource not found');
  const code =
    (Object.keys(ERROR_CODES) as ErrorCode[]).find((key) => ERROR_CODES[key].status === status) ?? 'VALIDATION_ERROR';
  return new ApiError(code, (error as Error).message || ERROR_CODES[code].message);
}

/** Writes every error as the spec's envelope; internal causes are logged with the correlation id, never sent. */
export function errorHandler(logger: Logger) {
  return function errorHandler(error: unknown, req: Request, res: Response, _next: NextFunction): void {
    let apiError: ApiError;
    const clientError = error instanceof ApiError ? undefined : fromClientError(error);
    if (error instanceof ApiError) {
      apiError = error;
      if (error.cause !== undefined)
        logger.warn(
          { ...requestTraceFields(req), correlationId: req.correlationId, err: error.cause, code: error.code },
          error.message,
        );
    } else if (clientError) apiError = clientError;
    else if (error instanceof QueryTooLarge) apiError = new ApiError('UNPROCESSABLE_ENTITY', error.message);
    else if (error instanceof StoreUnavailable) {
      logger.error(
        { ...requestTraceFields(req), correlationId: req.correlationId, err: error },
        'database unavailable',
      );
      apiError = new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly');
    } else {
      logger.error(
        {
          ...requestTraceFields(req),
          correlationId: req.correlationId,
          err: error,
          method: req.method,
          path: req.path,
        },
        'unhandled error',
      );
      apiError = new ApiError('INTERNAL_ERROR');
    }
    recordRequestError(req, error, apiError.status);
    if (res.headersSent) return void res.end();
    if (apiError.retryAfterSeconds !== undefined) res.setHeader('retry-after', String(apiError.retryAfterSeconds));
    res.status(apiError.status).json(apiError.toBody());
  };
}

/** Any path no route claimed: 404 in the error envelope. */
export function notFoundHandler(req: Request, res: Response): void {
  res.status(404).json(new ApiError('NOT_FOUND', `No route for ${req.method} ${req.path}`).toBody());
}
