import type { NextFunction, Request, Response } from 'express';
import { newDetails, validationError } from '../errors/apiError.js';

/** Names the query parser drops silently (they would reach Object.prototype): `__proto__`, `constructor`, `toString`, ... */
function isPrototypeName(name: string): boolean {
  return name === '__proto__' || name === 'prototype' || Object.hasOwn(Object.prototype, name);
}

/**
 * The extended query parser leaves out `__proto__[x]=1`, `constructor=1` and `sort[toString]=1`
 * without a word, so strict routes never see them. Read the raw names instead and refuse any
 * that has such a part, as every other unknown parameter is refused: 400 naming it.
 */
export function refusePrototypeKeys() {
  return function refusePrototypeKeys(req: Request, _res: Response, next: NextFunction): void {
    const queryAt = req.originalUrl.indexOf('?');
    if (queryAt < 0) return next();
    const details = newDetails();
    for (const name of new URLSearchParams(req.originalUrl.slice(queryAt + 1)).keys()) {
      const parts = name.split(/[[\].]/).filter(Boolean);
      if (parts.some(isPrototypeName)) details[name] = 'is not a known query parameter';
    }
    next(Object.keys(details).length > 0 ? validationError(details, 'Invalid query parameters') : undefined);
  };
}
