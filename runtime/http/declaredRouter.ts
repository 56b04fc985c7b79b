import type { TSchema } from '@sinclair/typebox';
import AjvModule, { type ValidateFunction } from 'ajv';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { requireAdmin, requirePermission, requireUser } from '../access/guards.js';
import { type Access, type AnyRoute, type BodyOf, expressPath, type QueryOf, type ResponseOf } from '../api/route.js';
import type { Caller } from '../context/caller.js';
import { ApiError, validationError } from '../errors/apiError.js';
import type { AppModel } from '../model/types.js';
import { validationDetails } from '../model/validationDetails.js';
import { exactRouter } from './exactRouter.js';

const Ajv = AjvModule.default;
const ajvOptions = { allErrors: true, strict: false, allowUnionTypes: true } as const;
const bodies = new Ajv(ajvOptions);
// Query values arrive as text: `limit=20` is read as the integer the declaration names, and a
// value given once is a list of one where the declaration names a list.
const queries = new Ajv({ ...ajvOptions, coerceTypes: 'array' });
const compiled = new WeakMap<TSchema, ValidateFunction>();

function validator(ajv: InstanceType<typeof Ajv>, schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** What a handler is given: its validated query and body, typed from the declaration. */
export interface RouteInput<R extends AnyRoute> {
  req: Request;
  res: Response;
  /** Hands an error that arrives later (a file stream's) to the error handler. */
  next: NextFunction;
  caller: Caller;
  params: Record<string, string>;
  query: QueryOf<R>;
  body: BodyOf<R>;
}

export interface RawOptions {
  /** Middleware before the checks (a form parser of its own). */
  before?: RequestHandler[];
  /** Answers a refused query or body itself (a form shown again with its errors) instead of the envelope. */
  invalid?(error: ApiError, req: Request, res: Response): void;
}

/** 401 and 403 before anything about the request's content. */
export function checkAccess(access: Access, caller: Caller): void {
  if (access === 'public' || access === 'optional') return;
  if (access === 'signedIn') requireUser(caller);
  else if (access === 'admin') requireAdmin(caller);
  else requirePermission(caller, access.permission);
}

/** The query, read against the declaration (numbers and booleans from their text); unknown names are refused. */
export function readQuery<R extends AnyRoute>(route: R, query: unknown): QueryOf<R> {
  if (!route.query) return {} as QueryOf<R>;
  const input = { ...(query as Record<string, unknown>) };
  const validate = validator(queries, route.query);
  if (validate(input)) return input as QueryOf<R>;
  const details = validationDetails(validate.errors ?? []);
  const known = Object.keys((route.query as { properties?: object }).properties ?? {});
  // Query values are text: a flag is spelled true or false, as the list's parameters say it.
  for (const [key, message] of Object.entries(details))
    if (message === 'is not allowed')
      details[key] = known.length
        ? `is not a known query parameter (${known.join(', ')})`
        : 'is not a known query parameter';
    else if (message === 'must be boolean') details[key] = 'must be true or false';
  throw validationError(details, 'Invalid query parameters');
}

/**
 * The body, read against the declaration. A top-level null is the same as leaving the field out,
 * unless the field admits null.
 */
export function readBody<R extends AnyRoute>(route: R, body: unknown): BodyOf<R> {
  if (!route.body) return undefined as BodyOf<R>;
  let input = body;
  if ((input === undefined || input === null) && route.bodyOptional) input = {};
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw validationError({ body: 'must be a JSON object' });
  const properties = (route.body as { properties?: Record<string, TSchema> }).properties ?? {};
  input = Object.fromEntries(
    Object.entries(input).filter(([key, value]) => value !== null || admitsNull(properties[key])),
  );
  const validate = validator(bodies, route.body);
  if (validate(input)) return input as BodyOf<R>;
  throw validationError(validationDetails(validate.errors ?? []));
}

function admitsNull(schema: TSchema | undefined): boolean {
  if (!schema) return true;
  const type = (schema as { type?: unknown }).type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  return ((schema as { anyOf?: TSchema[] }).anyOf ?? []).some(admitsNull);
}

function inputOf<R extends AnyRoute>(route: R, req: Request, res: Response, next: NextFunction): RouteInput<R> {
  return {
    req,
    res,
    next,
    caller: req.caller,
    params: req.params as Record<string, string>,
    query: readQuery(route, req.query),
    // Multipart bodies stream through their handler, which reads them part by part.
    body: route.bodyType === 'multipart' ? (undefined as BodyOf<R>) : readBody(route, req.body),
  };
}

/** A route answered as JSON: the handler's value, with the declared status. */
export function jsonHandler<R extends AnyRoute>(
  route: R,
  handler: (input: RouteInput<R>) => Promise<ResponseOf<R>> | ResponseOf<R>,
): RequestHandler {
  return async function declaredRoute(req: Request, res: Response, next: NextFunction): Promise<void> {
    checkAccess(route.access, req.caller);
    const answer = await handler(inputOf(route, req, res, next));
    res.status(route.status ?? 200).json(answer);
  };
}

/** A route that writes its own answer: a page, a file, a stream, a redirect, more than one status. */
export function rawHandler<R extends AnyRoute>(
  route: R,
  handler: (input: RouteInput<R>) => Promise<void> | void,
  options: RawOptions = {},
): RequestHandler {
  return async function declaredRoute(req: Request, res: Response, next: NextFunction): Promise<void> {
    checkAccess(route.access, req.caller);
    let input: RouteInput<R>;
    try {
      input = inputOf(route, req, res, next);
    } catch (error) {
      if (options.invalid && error instanceof ApiError) return options.invalid(error, req, res);
      throw error;
    }
    await handler(input);
  };
}

/**
 * The routes of one prefix, each registered from its declaration: the declared method and path,
 * then access, query and body checks, then the handler.
 */
export class DeclaredRouter {
  readonly router: Router = exactRouter();
  /** The declarations registered here, for the test that every route has one. */
  readonly declarations: AnyRoute[] = [];

  /** `model`: the app whose entities fill in the declarations that name them (a list of plurals). */
  constructor(
    private readonly prefix = '',
    private readonly model?: AppModel,
  ) {}

  json<R extends AnyRoute>(route: R, handler: (input: RouteInput<R>) => Promise<ResponseOf<R>> | ResponseOf<R>): this {
    return this.register(route, [jsonHandler(this.forApp(route), handler)]);
  }

  raw<R extends AnyRoute>(
    route: R,
    handler: (input: RouteInput<R>) => Promise<void> | void,
    options: RawOptions = {},
  ): this {
    return this.register(route, [...(options.before ?? []), rawHandler(this.forApp(route), handler, options)]);
  }

  private forApp<R extends AnyRoute>(route: R): R {
    return route.forModel && this.model ? { ...route, ...route.forModel(this.model) } : route;
  }

  private register(route: AnyRoute, handlers: RequestHandler[]): this {
    const path = expressPath(route, this.prefix);
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    this.router[method](path, ...handlers);
    this.declarations.push(route);
    return this;
  }
}
