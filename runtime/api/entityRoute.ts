import type { TProperties, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../errors/apiError.js';
import type { EndpointRouteName, EntityRouteName, RelationRouteName } from '../model/entityRoutes.js';
import type { EntityModel } from '../model/types.js';
import type { JsonSchema } from '../model/valueSchema.js';
import type { AnyRoute, ClientMethod, RouteDeclaration } from './route.js';
import { Component, Type } from './schemas.js';

/** Where the entities' routes live: `/api/v1/{plural}`. */
export const API_PREFIX = '/api/v1';

// What an entity route declaration is, and the pieces the declarations share.

/** One route of one entity, as the runtime serves it and the document describes it. */
export interface EntityRouteDeclaration extends AnyRoute {
  /** The entity's plural. */
  entity: string;
  /** The operation that serves it. */
  name: EntityRouteName | EndpointRouteName | RelationRouteName;
  /** The query grammar read by a parser of its own (the list's, the aggregation's), and its documented parameters. */
  grammar?: { parser: 'list' | 'aggregate' | 'populate'; parameters: JsonSchema[] };
  /** The body is checked by the entity's compiled validators (in the operation), not by the router. */
  bodyCheckedBy?: 'entity';
  /** Takes x-change-reason: the write keeps history. */
  changeReason?: boolean;
  /** Answers records in the request's locale (`?locale`, Accept-Language) where the app has locales. */
  localized?: boolean;
  /** Path parameters that are not text, by name (a version number). */
  params?: Record<string, TSchema>;
}

/** The parts of a declaration that depend on the entity. */
export type Declared = Omit<
  EntityRouteDeclaration,
  'method' | 'path' | 'operationId' | 'tag' | 'entity' | 'name' | 'access'
> &
  Partial<Pick<EntityRouteDeclaration, 'access'>>;

/** A kind of entity route: where it lives below `/api/v1/{plural}`, which entities have it, what it takes and answers. */
export interface EntityRouteKind {
  name: EntityRouteName;
  method: RouteDeclaration['method'];
  /** Below `/{plural}`, in OpenAPI form: '', '/{id}', '/{id}/versions'. */
  path: string;
  has?: (entity: EntityModel) => boolean;
  declare: (entity: EntityModel, related: ReadonlyMap<string, EntityModel>) => Declared;
  client?: Omit<ClientMethod, 'group'>;
}

export const record = (entity: EntityModel) => Component(entity.name);
export const single = (entity: EntityModel): JsonSchema => ({
  type: 'object',
  properties: { data: record(entity) },
  required: ['data'],
});
export const BY_ID: ErrorCode[] = ['NOT_FOUND', 'UNAUTHORIZED', 'FORBIDDEN'];
export const WRITE: ErrorCode[] = [
  ...BY_ID,
  'VALIDATION_ERROR',
  'CONFLICT',
  'UNPROCESSABLE_ENTITY',
  'PAYLOAD_TOO_LARGE',
];
export const VERSION = Type.Integer({ minimum: 1, maximum: 9_999_999_999 });

/** Query parameters: these and no others. */
export const Query = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });
export const NO_QUERY = Query({});

/** A record write: checked by the entity's validators, answered in the request's locale, keeping history. */
export const writes = { changeReason: true, localized: true } as const;
