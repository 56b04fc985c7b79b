import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import './requestTypes.js';

export const CORRELATION_HEADER = 'x-correlation-id';
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps an incoming x-correlation-id of 1-128 safe characters, else makes a UUID; always echoes it. */
export function correlationId() {
  return function correlationId(req: Request, res: Response, next: NextFunction): void {
    const incoming = req.headers[CORRELATION_HEADER];
    const id = typeof incoming === 'string' && ACCEPTED.test(incoming) ? incoming : randomUUID();
    req.correlationId = id;
    res.setHeader(CORRELATION_HEADER, id);
    next();
  };
}
