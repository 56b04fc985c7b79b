import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { match } from 'path-to-regexp';
import type { EntityRoute } from './entityRoutes.js';

interface CompiledRoute {
  /** `<base>/<plural>`: the mount point Express would report. */
  prefix: string;
  method: string;
  path: string;
  /** What `req.route` is for this route: one object, so what is worked out per route can be kept by it. */
  route: { path: string };
  matches: (path: string) => Record<string, string> | undefined;
  handler: RequestHandler;
}

export interface FoundRoute {
  prefix: string;
  path: string;
  route: { path: string };
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
      routes.map(([method, path, handler]) => ({
        prefix: `${this.base}/${plural}`,
        method,
        path,
        route: Object.freeze({ path }),
        handler,
        matches: segmentMatcher(path) ?? regexpMatcher(path),
      })),
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
      if (params) return { prefix: route.prefix, path: route.path, route: route.route, params, handler: route.handler };
    }
    return undefined;
  }
}

type Matcher = (path: string) => Record<string, string> | undefined;

function regexpMatcher(path: string): Matcher {
  const matcher = match(path, { decode: false });
  return (candidate) => {
    const found = matcher(candidate);
    return found ? (found.params as Record<string, string>) : undefined;
  };
}

const PLAIN_SEGMENT = /^(:[A-Za-z_]\w*|[\w-]+)$/;

/**
 * What path-to-regexp answers for a path of plain segments (words and `:name` parameters), without
 * running a regular expression: literal segments compare ignoring case, a parameter takes one
 * non-empty segment as it is. Undefined for any other path. Candidates never end with a slash
 * (the table leaves those to Express).
 */
function segmentMatcher(path: string): Matcher | undefined {
  if (path === '/') return (candidate) => (candidate === '/' ? Object.create(null) : undefined);
  const segments = path.slice(1).split('/');
  if (!path.startsWith('/') || !segments.every((segment) => PLAIN_SEGMENT.test(segment))) return undefined;
  const names = segments.map((segment) => (segment.startsWith(':') ? segment.slice(1) : undefined));
  const literals = segments.map((segment) => segment.toLowerCase());
  const last = segments.length - 1;
  // Where each segment of the candidate ends, written by the check and read back on success.
  const ends: number[] = new Array(segments.length);
  const fits = (candidate: string): boolean => {
    let at = 1;
    for (let i = 0; i <= last; i++) {
      const slash = candidate.indexOf('/', at);
      // The last segment runs to the end, every other one to a slash.
      if (slash < 0 !== (i === last)) return false;
      const end = slash < 0 ? candidate.length : slash;
      if (end === at) return false;
      const literal = literals[i];
      if (names[i] === undefined && !(end - at === literal.length && sameWord(candidate, at, literal))) return false;
      ends[i] = end;
      at = end + 1;
    }
    return true;
  };
  return (candidate) => {
    if (!fits(candidate)) return undefined;
    const params: Record<string, string> = Object.create(null);
    for (let i = 0, at = 1; i <= last; at = ends[i] + 1, i++) {
      const name = names[i];
      if (name !== undefined) params[name] = candidate.slice(at, ends[i]);
    }
    return params;
  };
}

/** `candidate` holds the lower-case word `literal` at `at`, in any case. */
function sameWord(candidate: string, at: number, literal: string): boolean {
  return candidate.startsWith(literal, at) || candidate.slice(at, at + literal.length).toLowerCase() === literal;
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
          req.route = found.route;
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
