import type { NextFunction, Request, Response } from 'express';
import { type ApiError, validationError } from '../errors/apiError.js';
import { unstorableText } from '../store/storableText.js';

/** Deeper JSON than this is refused: no entity needs it, and recursive code must not meet it. */
export const MAX_BODY_DEPTH = 64;
const NUL = '\u0000';
const NUL_MESSAGE = unstorableText(NUL)!;

/**
 * Where a parsed JSON value holds something no store can keep: a NUL character (PostgreSQL text
 * and jsonb refuse it) or a lone surrogate in a string or key, or nesting deeper than
 * MAX_BODY_DEPTH. Iterative, so any depth is safe to inspect. Answers the problem keyed by the
 * top-level field it is in, or undefined.
 */
export function unstorableInput(value: unknown, root = 'body'): ApiError | undefined {
  const pending: { value: unknown; field: string; depth: number }[] = [{ value, field: root, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, field, depth } = pending.pop()!;
    if (typeof current === 'string') {
      const problem = unstorableText(current);
      if (problem) return validationError({ [field]: problem }, 'Input holds text no store can keep');
      continue;
    }
    if (!current || typeof current !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH)
      return validationError(
        { [field]: `is nested deeper than ${MAX_BODY_DEPTH} levels` },
        'Input is nested too deeply',
      );
    // Below the top level, problems are reported under the top-level field they sit in.
    const named = depth === 0 && !Array.isArray(current);
    for (const [key, child] of Object.entries(current)) {
      const problem = unstorableText(key);
      if (problem) return validationError({ [field]: problem }, 'Input holds text no store can keep');
      pending.push({ value: child, field: named ? key : field, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * Refuses a path, query string or JSON body that holds input `unstorableInput` finds fault with, the
 * same on every store. `readsOnly` names routes whose body is only compared, never stored (login,
 * where the spec has LDAP escape a NUL in the user name): their body passes through.
 */
export function refuseUnstorableInput({ readsOnly = () => false }: { readsOnly?: (req: Request) => boolean } = {}) {
  return function refuseUnstorableInput(req: Request, _res: Response, next: NextFunction): void {
    const url = req.originalUrl;
    // A NUL can only arrive percent-encoded; Node's parser refuses raw ones.
    if (url.includes('%00')) {
      const queryAt = url.includes('?') ? url.indexOf('?') : url.length;
      if (url.slice(0, queryAt).includes('%00')) return next(validationError({ path: NUL_MESSAGE }, 'Invalid path'));
      for (const [name, value] of new URLSearchParams(url.slice(queryAt + 1))) {
        if (name.includes(NUL) || value.includes(NUL))
          return next(validationError({ [name.replaceAll(NUL, '')]: NUL_MESSAGE }, 'Invalid query parameters'));
      }
    }
    next(readsOnly(req) ? undefined : unstorableInput(req.body));
  };
}
