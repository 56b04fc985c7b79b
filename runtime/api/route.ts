import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../errors/apiError.js';
import type { AppModel } from '../model/types.js';

/**
 * Who may call a route, checked before its query and body are read (401 and 403 come before 400):
 * public (no credential is read), optional (a credential is read when sent), signedIn, admin, or
 * the holders of one permission.
 */
export type Access = 'public' | 'optional' | 'signedIn' | 'admin' | { permission: string };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route answers on success: JSON (the default), a page, a file, plain text or an event stream. */
export type ResponseType = 'json' | 'html' | 'binary' | 'text' | 'event-stream';

/** A method of the typed client: `client.<group>.<name>(...)`; `session` keeps or drops the credential it answers. */
export interface ClientMethod {
  group: string;
  name: string;
  /** use: the answer's token becomes the client's credential; end: the credential is dropped. */
  session?: 'use' | 'end';
  /** The answer's `data` (routes whose bodies are the `{ data }` envelope). */
  unwrap?: boolean;
  /** The query parameters as the method's arguments, in order (`search(q, limit)`), not one object. */
  positional?: boolean;
  /** The body is this one field, taken as the method's argument (`bulk(items)`). */
  bodyField?: string;
  /** Takes request options (idempotency key, change reason, locale); a declared query rides in them. */
  options?: boolean;
  /** The method's comment in the client, when the summary is not the right words for it. */
  doc?: string;
}

/**
 * One route of the runtime's own API, declared once. The router (access, AJV validation of the
 * query and body), the OpenAPI operation, the typed client method and the console's types are
 * all derived from it (runtime/http/declaredRouter.ts, generator/emit/openapi/).
 */
export interface RouteDeclaration<
  Query extends TObject | undefined = TObject | undefined,
  Body extends TSchema | undefined = TSchema | undefined,
  Response extends TSchema | undefined = TSchema | undefined,
> {
  method: HttpMethod;
  /** The full path in OpenAPI form: `/api/v1/users/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /** More than the summary says: how to use it, what it answers when (OpenAPI `description`, Markdown). */
  description?: string;
  access: Access;
  /** Query parameters: an object schema; unknown parameters are refused unless it allows more. */
  query?: Query;
  /** Request headers the route reads (documented; the handler checks them). */
  headers?: TObject;
  body?: Body;
  /** How the body is sent: JSON (default), an HTML form, or multipart (read by the handler as a stream). */
  bodyType?: 'json' | 'form' | 'multipart';
  /** The body may be left out (read as `{}`). */
  bodyOptional?: boolean;
  /** The status of a success (200 unless said). */
  status?: number;
  response?: Response;
  responseType?: ResponseType;
  responseDescription?: string;
  /** Answers beyond the success and the error codes, by status (a 202 challenge, a 303 redirect). */
  responses?: Record<string, Record<string, unknown>>;
  /** The error codes the route itself answers (the pipeline's are added by the document). */
  errors: ErrorCode[];
  /**
   * The rate-limit tier: auth (per address, strict), or exempt (answered in front of the pipeline,
   * before the rate limit and the setup gate: health, metrics); by default the caller's own tier.
   */
  rateLimit?: 'auth' | 'exempt';
  /** Takes Idempotency-Key (default: every POST). */
  idempotent?: boolean;
  /** Takes x-tenant-id. */
  tenantScoped?: boolean;
  /** Whether the app has the route (a feature or an entity it needs); always when left out. */
  when?: (model: AppModel) => boolean;
  /** Parts of the declaration that name the app's own entities (a parameter's list of plurals). */
  forModel?: (model: AppModel) => Partial<Pick<RouteDeclaration, 'query' | 'summary' | 'description'>>;
  client?: ClientMethod;
}

/** What a route that reads a body may answer about it. */
export const INPUT_ERRORS: ErrorCode[] = ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE'];
/** What a route for some callers only answers the others. */
export const ACCESS_ERRORS: ErrorCode[] = ['UNAUTHORIZED', 'FORBIDDEN'];

/** Any declaration, whatever its schemas. */
// biome-ignore lint/suspicious/noExplicitAny: a list holds declarations of every shape
export type AnyRoute = RouteDeclaration<any, any, any>;

export type QueryOf<R> =
  R extends RouteDeclaration<infer Q, TSchema | undefined, TSchema | undefined>
    ? Q extends TObject
      ? Static<Q>
      : Record<string, never>
    : never;
export type BodyOf<R> =
  R extends RouteDeclaration<TObject | undefined, infer B, TSchema | undefined>
    ? B extends TSchema
      ? Static<B>
      : undefined
    : never;
export type ResponseOf<R> =
  R extends RouteDeclaration<TObject | undefined, TSchema | undefined, infer A>
    ? A extends TSchema
      ? Static<A>
      : undefined
    : never;

/** A declaration, with its schema types kept for the handler and the client. */
export function route<
  Query extends TObject | undefined = undefined,
  Body extends TSchema | undefined = undefined,
  Response extends TSchema | undefined = undefined,
>(declaration: RouteDeclaration<Query, Body, Response>): RouteDeclaration<Query, Body, Response> {
  return declaration;
}

/** The declaration's path in Express form (`/users/:id`), below `prefix`. */
export function expressPath(declaration: Pick<RouteDeclaration, 'path'>, prefix = ''): string {
  if (!declaration.path.startsWith(prefix)) throw new Error(`${declaration.path} is not under ${prefix}`);
  return declaration.path.slice(prefix.length).replace(/\{([A-Za-z]+)\}/g, ':$1') || '/';
}
