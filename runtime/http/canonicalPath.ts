import type { Request } from 'express';

/** A path without the one trailing slash the routers also accept (`/` stays `/`). */
export function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * The path as routing sees it, for every policy that keys on a path (idempotency scope, which
 * body checks apply, the setup pages): exact case (routing is case-sensitive) without the one
 * trailing slash the routers also accept, so `/comments/` and `/comments` are one route to every
 * policy as well.
 */
export function canonicalPath(req: Request): string {
  return withoutTrailingSlash(req.path);
}
