import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/apiError.js';

/** Set when shutdown begins; requests that arrive afterwards get 503 and a closed connection. */
export interface DrainState {
  draining: boolean;
}

export function refuseWhileDraining(state: DrainState) {
  return function refuseWhileDraining(_req: Request, res: Response, next: NextFunction): void {
    if (!state.draining) return next();
    res.setHeader('Connection', 'close');
    next(new ApiError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance'));
  };
}
