import type { NextFunction, Request, Response, Router } from 'express';
import { match } from 'path-to-regexp';
import { ApiError } from '../errors/apiError.js';

/** Every method and full path the app serves, read from the routers as they are mounted. */
export class RouteTable {
  private readonly routes: { method: string; path: string; matches: (path: string) => boolean }[] = [];

  add(method: string, path: string): void {
    const matcher = match(path, { decode: false });
    this.routes.push({ method: method.toUpperCase(), path, matches: (p) => matcher(p) !== false });
  }

  /** Records the routes of a router mounted at `prefix`. */
  addRouter(prefix: string, router: Router): void {
    for (const layer of router.stack as { route?: { path: string; methods: Record<string, boolean> } }[]) {
      if (!layer.route) continue;
      for (const method of Object.keys(layer.route.methods))
        if (method !== '_all') this.add(method, `${prefix}${layer.route.path === '/' ? '' : layer.route.path}` || '/');
    }
  }

  /** The route pattern serving this method and path (`/api/v1/articles/:id`), for labels that never hold request text. */
  routeOf(method: string, path: string): string | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    return this.routes.find((route) => route.method === wanted && route.matches(path))?.path;
  }

  list(): { method: string; path: string }[] {
    return this.routes.map(({ method, path }) => ({ method, path }));
  }

  allowedFor(path: string): string[] {
    const methods = new Set(this.routes.filter((route) => route.matches(path)).map((route) => route.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }
}

/** A known path asked with a method it does not serve: 405 with Allow. */
export function methodNotAllowed(table: RouteTable) {
  return function methodNotAllowed(req: Request, res: Response, next: NextFunction): void {
    const allowed = table.allowedFor(req.path);
    if (allowed.length === 0 || allowed.includes(req.method)) return next();
    res.setHeader('Allow', allowed.join(', '));
    next(
      new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`),
    );
  };
}
