import type { NextFunction, Request, Response } from 'express';
import { SYSTEM_ADMIN } from '../access/parsePermission.js';
import type { RoleTable } from '../access/roleTable.js';
import { API_KEY_PREFIX, tokenHash } from '../auth/apiKeyToken.js';
import { anonymousCaller, callerForUser } from '../auth/resolveCaller.js';
import { verifySession } from '../auth/sessionToken.js';
import type { Caller } from '../context/caller.js';
import { ApiError } from '../errors/apiError.js';
import type { Store } from '../store/types.js';
import './requestTypes.js';
import { API_KEYS, REVOKED_SESSIONS, USERS } from '../model/collections.js';

export interface AuthenticateOptions {
  store: Store;
  roles: RoleTable;
  secret: string;
  cookieName: string;
  sessionTtlMs: number;
  now(): Date;
}

/** lastUsedAt of an API key is written at most this often. */
const KEY_USE_WRITE_INTERVAL_MS = 60_000;
const TENANT_HEADER = 'x-tenant-id';

/**
 * Turns the request's credential into a caller: `Authorization: Bearer` with a session token or
 * an `egk_` API key, else the session cookie. No credential: the ANONYMOUS caller. A Bearer that
 * does not verify: 401. A cookie that does not verify is ignored (a stale cookie must not block login).
 */
export function authenticate(options: AuthenticateOptions) {
  const keyUses = new Map<string, number>();

  async function sessionCaller(token: string): Promise<Caller | undefined> {
    const now = options.now().getTime();
    const claims = verifySession(options.secret, token, now, options.sessionTtlMs);
    if (!claims) return undefined;
    // Both reads at once: on a networked store that is one round trip instead of two.
    const read = () =>
      Promise.all([
        options.store.get(USERS, claims.userId),
        options.store.find(REVOKED_SESSIONS, {
          where: { field: 'tokenHash', op: 'eq', value: tokenHash(token) },
          limit: 1,
          select: ['id'],
        }),
      ]);
    // Remembered until users or revocations change, where the store hears every write (the count cache).
    const [user, [revoked]] = options.store.remember
      ? await options.store.remember(`session\u0000${token}`, [USERS, REVOKED_SESSIONS], read)
      : await read();
    if (!user || user.disabled === true || revoked) return undefined;
    const validAfter = typeof user.sessionsValidAfter === 'string' ? Date.parse(user.sessionsValidAfter) : 0;
    if (claims.issuedAt < validAfter) return undefined;
    return {
      ...(await callerForUser(user, options.roles)),
      credential: { kind: 'session', token, issuedAt: claims.issuedAt },
    };
  }

  async function apiKeyCaller(token: string): Promise<Caller> {
    const now = options.now();
    const [key] = await options.store.find(API_KEYS, {
      where: { field: 'tokenHash', op: 'eq', value: tokenHash(token) },
      limit: 1,
    });
    if (!key || key.revokedAt || Date.parse(key.expiresAt as string) <= now.getTime())
      throw new ApiError('UNAUTHORIZED', 'API key is invalid, revoked or expired');
    const owner = await options.store.get(USERS, key.ownerId as string);
    if (!owner || owner.disabled === true) throw new ApiError('UNAUTHORIZED', 'API key is invalid, revoked or expired');
    const ownerCaller = await callerForUser(owner, options.roles);
    // A key holds what it was given, and only while its owner still holds it.
    const permissions = new Set<string>((await options.roles.permissionsOf([])).values());
    for (const permission of key.permissions as string[]) {
      if (ownerCaller.isAdmin || ownerCaller.permissions.has(permission)) permissions.add(permission);
    }
    const lastWrite = keyUses.get(key.id) ?? 0;
    if (now.getTime() - lastWrite > KEY_USE_WRITE_INTERVAL_MS) {
      keyUses.set(key.id, now.getTime());
      await options.store.update(API_KEYS, key.id, { lastUsedAt: now.toISOString() });
    }
    return {
      ...ownerCaller,
      permissions,
      isAdmin: permissions.has(SYSTEM_ADMIN),
      credential: {
        kind: 'apiKey',
        id: key.id,
        expiresAt: key.expiresAt as string,
        ...(key.mcp === false ? { mcp: false as const } : {}),
      },
    };
  }

  /** The caller of a request; throws 401 for a Bearer credential that does not verify. */
  async function identify(req: Request): Promise<Caller> {
    const bearer = bearerToken(req);
    let caller: Caller | undefined;
    if (bearer?.startsWith(API_KEY_PREFIX)) caller = await apiKeyCaller(bearer);
    else if (bearer !== undefined) {
      caller = await sessionCaller(bearer);
      if (!caller) throw new ApiError('UNAUTHORIZED', 'Session is invalid or expired');
    } else {
      const cookie = cookieValue(req.headers.cookie, options.cookieName);
      if (cookie !== undefined) caller = await sessionCaller(cookie);
    }
    caller ??= await anonymousCaller(options.roles);
    const tenant = req.headers[TENANT_HEADER];
    // The client's address as the trusted proxies tell it (server.trustProxy), for the audit trail.
    // Object.assign, not a spread with more properties: V8 (Node 20) makes that object slow.
    const own: Caller = Object.assign({}, caller);
    if (typeof tenant === 'string' && tenant !== '') own.requestedTenantId = tenant;
    own.address = req.ip;
    return own;
  }

  async function authenticate(req: Request, _res: Response, next: NextFunction): Promise<void> {
    req.caller = await identify(req);
    next();
  }
  // Long-lived requests (realtime streams) authenticate again with the same headers.
  return Object.assign(authenticate, { identify });
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
