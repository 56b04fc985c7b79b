import type { NextFunction, Request, Response } from 'express';
import { anonymousCaller, callerForUser } from '../access/resolveCaller.js';
import type { RoleTable } from '../access/roleTable.js';
import { verifySession } from '../auth/sessionToken.js';
import type { Store } from '../store/types.js';
import { ApiError } from './errors.js';
import './requestTypes.js';

export interface AuthenticateOptions {
  store: Store;
  roles: RoleTable;
  secret: string;
  cookieName: string;
  sessionTtlMs: number;
  now(): Date;
}

/**
 * Turns the request's credential (session cookie, or the same token as a Bearer) into a caller.
 * No credential: the ANONYMOUS caller. A credential that does not verify: 401.
 */
export function authenticate(options: AuthenticateOptions) {
  return async function authenticate(req: Request, _res: Response, next: NextFunction): Promise<void> {
    const token = bearerToken(req) ?? cookieValue(req.headers.cookie, options.cookieName);
    if (token === undefined) {
      req.caller = await anonymousCaller(options.roles);
      return next();
    }
    const claims = verifySession(options.secret, token, options.now().getTime(), options.sessionTtlMs);
    const user = claims ? await options.store.get('users', claims.userId) : null;
    if (!claims || !user || user.disabled === true) throw new ApiError('UNAUTHORIZED', 'Session is invalid or expired');
    req.caller = await callerForUser(user, options.roles);
    next();
  };
}

function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new ApiError('UNAUTHORIZED', 'Authorization must be "Bearer <token>"');
  return match[1];
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      try {
        return decodeURIComponent(part.slice(index + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
