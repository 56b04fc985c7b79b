import type { Request, Response } from 'express';

/**
 * The route a request matched, as declared (`/api/v1/tickets/:id`): what the metrics and the
 * trace name it by. Undefined when no route matched it.
 */
export function routeLabel(
  req: Request,
  res: Response,
  routeOf?: (method: string, path: string) => string | undefined,
): string | undefined {
  // An error raised inside a mounted router is answered after it restored baseUrl: the mount point was kept in res.locals.
  if (req.route) return `${res.locals?.mountPath ?? req.baseUrl}${req.route.path === '/' ? '' : req.route.path}` || '/';
  return routeOf?.(req.method, (req.originalUrl ?? req.url ?? '/').split('?')[0]);
}
