import type { Request } from 'express';

/**
 * The path as routing sees it, for every policy that keys on a path (idempotency scope, which
 * body checks apply): exact case (routing is case-sensitive) without the one trailing slash the
 * routers also accept, so `/comments/` and `/comments` are one route to every policy as well.
 */
export function canonicalPath(req: Request): string {
  const path = req.path;
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
