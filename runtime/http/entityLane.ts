import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { match } from 'path-to-regexp';
import type { EntityRoute } from './entityRoutes.js';

interface CompiledRoute {
  /** `<base>/<plural>`: the mount point Express would report. */
  prefix: string;
  method: string;
  path: string;
  matches: (path: string) => Record<string, string> | undefined;
  handler: RequestHandler;
}

export interface FoundRoute {
  prefix: string;
  path: string;
  params: Record<string, string>;
  handler: RequestHandler;
}

/**
 * The entity routes by plural, matched the plain way: exact case, no trailing slash, no
 * percent-encoding (anything else is left to Express, which answers it as it always has).
 */
export class EntityRouteTable {
  private readonly byPlural = new Map<string, CompiledRoute[]>();
  private readonly start: string;

  constructor(private readonly base: string) {
    this.start = `${base}/`;
  }

  add(plural: string, routes: EntityRoute[]): void {
    this.byPlural.set(
      plural,
      routes.map(([method, path, handler]) => {
        const matcher = match(path, { decode: false });
        return {
          prefix: `${this.base}/${plural}`,
          method,
          path,
          handler,
          matches: (candidate) => {
            const found = matcher(candidate);
            return found ? (found.params as Record<string, string>) : undefined;
          },
        };
      }),
    );
  }

  find(method: string, url: string): FoundRoute | undefined {
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    if (!path.startsWith(this.start) || path.endsWith('/') || path.includes('%')) return undefined;
    const end = path.indexOf('/', this.base.length + 1);
    const plural = path.slice(this.base.length + 1, end < 0 ? undefined : end);
    const routes = this.byPlural.get(plural);
    if (!routes) return undefined;
    const rest = end < 0 ? '/' : path.slice(end);
    for (const route of routes) {
      if (route.method !== method) continue;
      const params = route.matches(rest);
      if (params) return { prefix: route.prefix, path: route.path, params, handler: route.handler };
    }
    return undefined;
  }
}

export interface LaneStages {
  /** Correlation id, request log, security headers, CORS, draining, rate limit (createApp's first layer). */
  front: RequestHandler;
  /** The setup gate. */
  gate: RequestHandler;
  /** Body, query and credential checks, authentication, the address and enrollment gates, idempotency. */
  body: RequestHandler;
  routes: EntityRouteTable;
  errors: ErrorRequestHandler;
}

/** Runs a matched route on a request that has Express's prototypes; `fail` gets every error. */
export type RouteRunner = (found: FoundRoute, req: Request, res: Response, fail: (error: unknown) => void) => void;

/**
 * The stages, then the route's handler: what Express's router would run for this route, without
 * its layer walk, mount-path rewriting and `next` chain. Errors from a stage, a throw or a
 * rejected promise go to `fail`.
 */
export function routeRunner(stages: LaneStages): RouteRunner {
  const chain = [stages.front, stages.gate, stages.body];
  return function runRoute(found, req, res, fail) {
    res.locals.mountPath = found.prefix;
    req.params = found.params;
    let index = 0;
    const step: NextFunction = (error?: unknown) => {
      if (error !== undefined && error !== null) return fail(error);
      let result: unknown;
      try {
        const stage = chain[index++];
        if (stage) result = stage(req, res, step);
        else {
          // Past the stages: the route, labelled as Express labels it (requestLog, metrics).
          req.baseUrl = found.prefix;
          req.route = { path: found.path };
          result = found.handler(req, res, fail);
        }
      } catch (thrown) {
        return fail(thrown);
      }
      if (result instanceof Promise) result.then(undefined, (rejected) => fail(rejected ?? new Error('Rejected')));
    };
    step();
  };
}

/**
 * The Express app's first layer: a plain entity route (EntityRouteTable) runs its stages and
 * handler here instead of walking the app's layers and the entity's router; anything else goes
 * on to the app's own layers, and errors to the app's error handler.
 */
export function entityLane(stages: LaneStages): RequestHandler {
  const run = routeRunner(stages);
  return function entityLane(req, res, next) {
    const found = stages.routes.find(req.method, req.url);
    if (!found) return next();
    run(found, req, res, next);
  };
}
