import type { EntityRouteDeclaration } from '../../../runtime/api/entityRoutes.js';
import type { AnyRoute } from '../../../runtime/api/route.js';
import type { ErrorCode } from '../../../runtime/errors/apiError.js';
import type { JsonSchema } from '../../../runtime/model/valueSchema.js';

/** One operation of the document, before it becomes an OpenAPI operation object. */
export interface Operation {
  method: string;
  /** OpenAPI form, `{id}` */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** none: no credential is read; required: a credential must be present; default: optional. */
  security?: 'none' | 'required';
  /** Query and header parameters. */
  query?: JsonSchema[];
  body?: JsonSchema;
  bodyType?: 'json' | 'form' | 'multipart';
  bodyOptional?: boolean;
  status?: number;
  response?: JsonSchema;
  responseType?: 'json' | 'html' | 'binary' | 'text' | 'event-stream';
  responseDescription?: string;
  errors: ErrorCode[];
  /** Takes x-tenant-id (operations on tenant-scoped entities). */
  tenantScoped?: boolean;
  /** Takes Idempotency-Key (default: POST). */
  idempotent?: boolean;
  /** Never rate-limited (health, metrics): no 429. */
  rateLimitExempt?: boolean;
  /** Takes x-change-reason (writes that keep history). */
  changeReason?: boolean;
  /** Responses beyond the success and the error codes, by status. */
  responses?: Record<string, JsonSchema>;
}

/** The operation a route declaration describes (runtime/api/). */
export function declaredOperation(route: AnyRoute): Operation {
  return {
    method: route.method,
    path: route.path,
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tag: route.tag,
    ...(route.access === 'public' ? { security: 'none' } : route.access === 'optional' ? {} : { security: 'required' }),
    query: [...parameters(route.query, 'query'), ...parameters(route.headers, 'header')],
    body: route.body,
    bodyType: route.bodyType,
    bodyOptional: route.bodyOptional,
    status: route.status,
    response: route.response,
    responseType: route.responseType,
    responseDescription: route.responseDescription,
    errors: route.errors,
    tenantScoped: route.tenantScoped,
    idempotent: route.idempotent,
    rateLimitExempt: route.rateLimit === 'exempt',
    responses: route.responses,
  };
}

const LOCALE_PARAMETERS = [
  { $ref: '#/components/parameters/locale' },
  { $ref: '#/components/parameters/AcceptLanguage' },
];

/**
 * The operation of an entity route: its declared query, or the parameters of the grammar its
 * parser reads; the locale where the app has locales and the route answers records.
 */
export function entityOperation(route: EntityRouteDeclaration, locales: boolean): Operation {
  const operation = declaredOperation(route);
  if (route.grammar) operation.query = [...route.grammar.parameters];
  if (locales && route.localized) operation.query = [...(operation.query ?? []), ...LOCALE_PARAMETERS];
  if (route.changeReason) operation.changeReason = true;
  return operation;
}

/** The properties of an object schema as parameters; a property's description becomes the parameter's. */
function parameters(schema: JsonSchema | undefined, place: 'query' | 'header'): JsonSchema[] {
  if (!schema?.properties) return [];
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: place,
      ...(required.has(name) ? { required: true } : {}),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}
