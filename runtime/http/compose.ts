import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { exactRouter } from './exactRouter.js';

/**
 * Middlewares run in order as one layer of the app: the router matches one layer instead of
 * several on every request. Each keeps the middleware contract: `next()` goes on, `next(error)`
 * skips the rest with the error, a throw or a rejected promise is an error.
 */
export function compose(...handlers: (RequestHandler | undefined)[]): RequestHandler {
  const chain = handlers.filter((handler): handler is RequestHandler => handler !== undefined);
  return function composed(req: Request, res: Response, next: NextFunction): void {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = chain[index++];
      if (!handler) return next();
      try {
        const result = handler(req, res, step) as unknown;
        if (result instanceof Promise)
          result.then(undefined, (rejected) => next(rejected ?? new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}

/**
 * Routers mounted under `/api/v1/<name>` found by their first path segment, instead of the app
 * trying each mount point in turn. Each router still runs inside its own one-layer mount, so
 * req.baseUrl, req.url and their restoring on next() are Express's own. Segments compare in their
 * exact case, as the routers match (exactRouter.ts).
 */
export class MountTable {
  private readonly mounts = new Map<string, Router>();

  constructor(private readonly base: string) {}

  /**
   * `prefix` must be `<base>/<one segment>`; `before` runs first (it may record the mount point).
   * Routers on the same prefix are tried in the order they were added.
   */
  add(prefix: string, before: RequestHandler, router: RequestHandler): void {
    const segment = prefix.slice(this.base.length + 1);
    if (!prefix.startsWith(`${this.base}/`) || segment === '' || segment.includes('/'))
      throw new Error(`mount point ${prefix} is not one segment under ${this.base}`);
    const mounted = this.mounts.get(segment) ?? exactRouter();
    this.mounts.set(segment, mounted.use(prefix, before, router));
  }

  /** Some router is mounted at this prefix already. */
  has(prefix: string): boolean {
    return this.mounts.has(prefix.slice(this.base.length + 1));
  }

  handler(): RequestHandler {
    const start = this.base.length + 1;
    const base = `${this.base}/`;
    const mounts = this.mounts;
    return function mountedRouters(req, res, next) {
      const path = req.path;
      if (path.length <= start || !path.startsWith(base)) return next();
      const end = path.indexOf('/', start);
      const mounted = mounts.get(path.slice(start, end < 0 ? undefined : end));
      if (!mounted) return next();
      mounted(req, res, next);
    };
  }
}
