import type { TProperties, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../errors/apiError.js';
import {
  type EndpointRouteName,
  type EntityRouteName,
  incrementableFields,
  type RelationRouteName,
  type RouteSpec,
} from '../model/entityRoutes.js';
import type { AppModel, EntityModel } from '../model/types.js';
import { type JsonSchema, objectSchema } from '../model/valueSchema.js';
import { aggregateGrammar, listGrammar } from './entityParameters.js';
import type { AnyRoute, ClientMethod, RouteDeclaration } from './route.js';
import { Body, Component, Enum, Text, Type } from './schemas.js';

/** Where the entities' routes live: `/api/v1/{plural}`. */
export const API_PREFIX = '/api/v1';

// Every route of an entity, declared once: the router and its fast lane, the input checks, the
// OpenAPI operations and the typed client's methods are all derived from these declarations.

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
type Declared = Omit<EntityRouteDeclaration, 'method' | 'path' | 'operationId' | 'tag' | 'entity' | 'name' | 'access'> &
  Partial<Pick<EntityRouteDeclaration, 'access'>>;

/** A kind of entity route: where it lives below `/api/v1/{plural}`, which entities have it, what it takes and answers. */
interface EntityRouteKind {
  name: EntityRouteName;
  method: RouteDeclaration['method'];
  /** Below `/{plural}`, in OpenAPI form: '', '/{id}', '/{id}/versions'. */
  path: string;
  has?: (entity: EntityModel) => boolean;
  declare: (entity: EntityModel, related: ReadonlyMap<string, EntityModel>) => Declared;
  client?: Omit<ClientMethod, 'group'>;
}

const record = (entity: EntityModel) => Component(entity.name);
const single = (entity: EntityModel): JsonSchema => ({
  type: 'object',
  properties: { data: record(entity) },
  required: ['data'],
});
const BY_ID: ErrorCode[] = ['NOT_FOUND', 'UNAUTHORIZED', 'FORBIDDEN'];
const WRITE: ErrorCode[] = [...BY_ID, 'VALIDATION_ERROR', 'CONFLICT', 'UNPROCESSABLE_ENTITY', 'PAYLOAD_TOO_LARGE'];
const VERSION = Type.Integer({ minimum: 1, maximum: 9_999_999_999 });

/** Query parameters: these and no others. */
const Query = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });
const NO_QUERY = Query({});

/** A record write: checked by the entity's validators, answered in the request's locale, keeping history. */
const writes = { changeReason: true, localized: true } as const;

/** `limit` (1-200) and `cursor` of the history lists. */
const HistoryPage = Query({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  cursor: Type.Optional(Text(2000)),
});

const historyList = (item: string): JsonSchema => ({
  type: 'object',
  required: ['items', 'total', 'hasMore'],
  properties: {
    items: { type: 'array', items: Component(item) },
    total: { type: 'integer' },
    hasMore: { type: 'boolean' },
    nextCursor: { type: 'string' },
  },
});

const metadata = (schema: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { data: schema },
  required: ['data'],
});

/** Match order: fixed paths before `{id}`; custom endpoints come first, reverse relations after these. */
const KINDS: EntityRouteKind[] = [
  {
    name: 'metadata',
    method: 'GET',
    path: '/metadata',
    declare: (e) => ({
      summary: `Metadata of ${e.label}`,
      response: metadata(Component('EntityMetadata')),
      errors: [],
    }),
  },
  {
    name: 'metadataType',
    method: 'GET',
    path: '/metadata/type',
    declare: (e) => ({
      summary: `Base and ownership of ${e.label}`,
      response: metadata({ type: 'object' }),
      errors: [],
    }),
  },
  {
    name: 'metadataFields',
    method: 'GET',
    path: '/metadata/fields',
    declare: (e) => ({
      summary: `Fields of ${e.label}`,
      response: metadata({
        type: 'object',
        required: ['fields'],
        properties: { fields: { type: 'array', items: Component('FieldMetadata') } },
      }),
      errors: [],
    }),
  },
  {
    name: 'metadataField',
    method: 'GET',
    path: '/metadata/field/{name}',
    declare: (e) => ({
      summary: `One field of ${e.label}`,
      response: metadata(Component('FieldMetadata')),
      errors: ['NOT_FOUND'],
    }),
  },
  {
    name: 'aggregate',
    method: 'GET',
    path: '/aggregate',
    declare: (e) => ({
      summary: `Count, sum, average, minimum and maximum of ${e.label}, per group`,
      grammar: { parser: 'aggregate', parameters: aggregateGrammar(e) },
      response: Component(`${e.name}Aggregate`),
      errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN'],
      localized: true,
    }),
    client: {
      name: 'aggregate',
      unwrap: true,
      doc: 'Count, sum, average, minimum and maximum per group, over the records you may see.',
    },
  },
  {
    name: 'list',
    method: 'GET',
    path: '',
    declare: (e) => ({
      summary: `List ${e.label}`,
      grammar: { parser: 'list', parameters: listGrammar(e) },
      response: Component(`${e.name}List`),
      errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN'],
      localized: true,
    }),
    client: { name: 'list', unwrap: true },
  },
  {
    name: 'create',
    method: 'POST',
    path: '',
    declare: (e) => ({
      summary: `Create a ${e.name}`,
      status: 201,
      body: Component(`${e.name}Create`),
      bodyCheckedBy: 'entity',
      response: single(e),
      errors: WRITE,
      ...writes,
    }),
    client: { name: 'create', unwrap: true, options: true },
  },
  {
    name: 'bulkCreate',
    method: 'POST',
    path: '/bulk',
    declare: (e) => ({
      summary: `Create up to 500 ${e.label} at once, all or nothing`,
      status: 201,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['items'],
        properties: { items: { type: 'array', maxItems: 500, items: Component(`${e.name}Create`) } },
      },
      bodyCheckedBy: 'entity',
      response: {
        type: 'object',
        required: ['data'],
        properties: {
          data: {
            type: 'object',
            required: ['items', 'count'],
            properties: { items: { type: 'array', items: record(e) }, count: { type: 'integer' } },
          },
        },
      },
      errors: WRITE.filter((c) => c !== 'NOT_FOUND'),
      ...writes,
    }),
    client: {
      name: 'bulk',
      unwrap: true,
      options: true,
      bodyField: 'items',
      doc: 'Up to 500 records, all or nothing.',
    },
  },
  {
    name: 'get',
    method: 'GET',
    path: '/{id}',
    declare: (e) => ({
      summary: `One ${e.name}`,
      grammar: { parser: 'populate', parameters: [{ $ref: '#/components/parameters/populate' }] },
      response: single(e),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
      localized: true,
    }),
    client: { name: 'get', unwrap: true },
  },
  {
    name: 'update',
    method: 'PATCH',
    path: '/{id}',
    declare: (e) => ({
      summary: `Change fields of a ${e.name}`,
      body: Component(`${e.name}Update`),
      bodyCheckedBy: 'entity',
      response: single(e),
      errors: WRITE,
      ...writes,
    }),
    client: { name: 'update', unwrap: true, options: true },
  },
  {
    name: 'remove',
    method: 'DELETE',
    path: '/{id}',
    declare: (e) => ({
      summary: e.trash
        ? `Move a ${e.name} to the trash (permanent=true: delete it for good, with ${e.plural}:purge)`
        : `Delete a ${e.name}`,
      // Other parameters are left alone: `changeReason` may come as one.
      query: Type.Object(
        e.trash
          ? {
              permanent: Type.Optional(
                Type.Boolean({
                  description: 'delete for good, in the trash or not (needs the purge permission)',
                  default: false,
                }),
              ),
            }
          : {},
        { additionalProperties: true },
      ),
      response: {
        type: 'object',
        required: ['data'],
        properties: {
          data: {
            type: 'object',
            required: ['id', 'deleted'],
            properties: {
              id: { type: 'string' },
              deleted: { const: true },
              ...(e.trash ? { trashed: { const: true, description: 'moved to the trash' } } : {}),
            },
          },
        },
      },
      // 409: records that reference it with onDelete: restrict.
      errors: [...BY_ID, 'CONFLICT'],
      changeReason: true,
    }),
    client: {
      name: 'remove',
      unwrap: true,
      options: true,
      doc: 'Deletes the record; where the entity keeps a trash it moves there (`trashed: true`) unless `permanent` (which needs the purge permission).',
    },
  },
  {
    name: 'increment',
    method: 'PATCH',
    path: '/{id}/increment',
    has: (e) => incrementableFields(e).length > 0,
    declare: (e) => ({
      summary: 'Add to numeric fields atomically (negative subtracts)',
      body: Component(`${e.name}Increment`),
      bodyCheckedBy: 'entity',
      response: single(e),
      errors: WRITE,
      ...writes,
    }),
    client: {
      name: 'increment',
      unwrap: true,
      options: true,
      doc: 'Adds to numeric fields atomically (negative amounts subtract).',
    },
  },
  {
    name: 'archive',
    method: 'POST',
    path: '/{id}/archive',
    has: (e) => e.ownership === 'owned',
    declare: (e) => ({
      summary: `Archive a ${e.name} (left out of lists unless includeArchived)`,
      response: single(e),
      errors: [...BY_ID, 'UNPROCESSABLE_ENTITY'],
      ...writes,
    }),
    client: { name: 'archive', unwrap: true, options: true },
  },
  {
    name: 'restore',
    method: 'POST',
    path: '/{id}/restore',
    has: (e) => e.ownership === 'owned',
    declare: (e) => ({
      summary: `Restore an archived ${e.name}`,
      response: single(e),
      errors: [...BY_ID, 'UNPROCESSABLE_ENTITY'],
      ...writes,
    }),
    client: { name: 'restore', unwrap: true, options: true },
  },
  {
    name: 'restoreFromTrash',
    method: 'POST',
    path: '/{id}/restore-from-trash',
    has: (e) => Boolean(e.trash),
    declare: (e) => ({
      summary: `Take a ${e.name} out of the trash (needs the delete permission)`,
      response: single(e),
      errors: [...BY_ID, 'CONFLICT'],
      ...writes,
    }),
    client: {
      name: 'restoreFromTrash',
      unwrap: true,
      options: true,
      doc: 'Takes a record out of the trash, as it was when it went in.',
    },
  },
  {
    name: 'versions',
    method: 'GET',
    path: '/{id}/versions',
    has: (e) => e.versioning === 'full',
    declare: () => ({
      summary: 'Versions, newest first',
      query: HistoryPage,
      response: historyList('Version'),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'versions' },
  },
  {
    name: 'compareVersions',
    method: 'GET',
    path: '/{id}/versions/compare',
    has: (e) => e.versioning === 'full',
    declare: () => ({
      summary: 'Compare two versions field by field',
      query: Query({ a: VERSION, b: VERSION }),
      response: Component('VersionComparison'),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'compareVersions', positional: true },
  },
  {
    name: 'version',
    method: 'GET',
    path: '/{id}/versions/{version}',
    has: (e) => e.versioning === 'full',
    declare: () => ({
      summary: 'One version',
      params: { version: VERSION },
      response: Component('Version'),
      errors: BY_ID,
    }),
    client: { name: 'version' },
  },
  {
    name: 'revert',
    method: 'POST',
    path: '/{id}/revert/{version}',
    has: (e) => e.versioning === 'full',
    declare: (e) => ({
      summary: 'Restore the state of a version as a new version',
      params: { version: VERSION },
      body: Body({ changeReason: Type.Optional(Text(1000)) }),
      bodyOptional: true,
      response: {
        type: 'object',
        required: ['success', 'revertedTo', 'newVersion', 'entity'],
        properties: {
          success: { type: 'boolean' },
          revertedTo: { type: 'integer' },
          newVersion: { type: 'integer' },
          entity: record(e),
        },
      },
      errors: [...BY_ID, 'VALIDATION_ERROR', 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
      changeReason: true,
    }),
    client: { name: 'revert', bodyField: 'changeReason' },
  },
  {
    name: 'audit',
    method: 'GET',
    path: '/{id}/audit',
    has: (e) => e.versioning === 'simple',
    declare: () => ({
      summary: 'Audit log, newest first',
      query: HistoryPage,
      response: historyList('AuditLog'),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'audit' },
  },
];

/** After the reverse relations: the changes of tracked fields. */
const TRACKED: EntityRouteKind[] = [
  {
    name: 'fieldChanges',
    method: 'GET',
    path: '/{id}/field-changes',
    has: (e) => e.fields.some((f) => f.trackChanges),
    declare: () => ({
      summary: 'Changes of tracked fields',
      query: Query({
        fieldName: Type.Optional(Text(200)),
        approvalStatus: Type.Optional(Enum(['pending', 'approved', 'rejected'])),
      }),
      response: {
        type: 'object',
        required: ['items'],
        properties: { items: { type: 'array', items: Component('FieldChange') } },
      },
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'fieldChanges' },
  },
  {
    name: 'decideFieldChange',
    method: 'PUT',
    path: '/{id}/field-changes/{changeId}',
    has: (e) => e.fields.some((f) => f.trackChanges),
    declare: () => ({
      summary: 'Approve or reject a change (admin)',
      access: 'signedIn',
      body: Body({ approvalStatus: Enum(['approved', 'rejected']), approvedBy: Type.Optional(Text(200)) }),
      response: Component('FieldChange'),
      errors: [...BY_ID, 'VALIDATION_ERROR', 'UNPROCESSABLE_ENTITY'],
    }),
    client: { name: 'decideFieldChange' },
  },
];

const readsBody = (method: string) => ['POST', 'PUT', 'PATCH'].includes(method);

/** Where a route is and what serves it: enough for the route table, without the entity's neighbours. */
type Place = Pick<EntityRouteDeclaration, 'name' | 'method'> & { path: string };

/**
 * The places of one entity's routes, in match order: its custom endpoints, the generic routes it
 * has, its reverse relations, the tracked-field routes. Internal entities have none.
 */
function placesOf(entity: EntityModel): Place[] {
  if (entity.internal) return [];
  const kinds = (list: EntityRouteKind[]) => list.filter((kind) => kind.has?.(entity) ?? true);
  return [
    ...(entity.endpoints ?? []).map((e): Place => ({ name: `endpoint:${e.name}`, method: e.method, path: e.path })),
    ...kinds(KINDS),
    ...(entity.relations ?? []).map(
      (r): Place => ({ name: `relation:${r.name}`, method: 'GET', path: `/{id}/${r.name}` }),
    ),
    ...kinds(TRACKED),
  ];
}

const KIND_BY_NAME = new Map([...KINDS, ...TRACKED].map((kind) => [kind.name as string, kind]));

/** The declaration of one route of an entity. */
function declaration(
  entity: EntityModel,
  place: Place,
  related: ReadonlyMap<string, EntityModel>,
): EntityRouteDeclaration {
  const [prefix, own] = place.name.split(':') as [string, string | undefined];
  const identity = {
    entity: entity.plural,
    name: place.name,
    method: place.method,
    path: `${API_PREFIX}/${entity.plural}${place.path}`,
    operationId: `${entity.plural}_${own ?? prefix}`,
    tag: entity.plural,
    // Each operation checks the entity's permissions itself (own or all, conditions).
    access: 'optional' as const,
    tenantScoped: entity.tenantScoped && !prefix.startsWith('metadata'),
  };
  if (prefix === 'endpoint') return { ...identity, ...endpointParts(entity, own!) };
  if (prefix === 'relation') return { ...identity, ...relationParts(entity, own!, related) };
  const kind = KIND_BY_NAME.get(prefix)!;
  return {
    ...identity,
    ...kind.declare(entity, related),
    ...(kind.client ? { client: { group: entity.plural, ...kind.client } } : {}),
  };
}

/** A custom endpoint declared in the entity file. */
function endpointParts(entity: EntityModel, name: string): Declared {
  const endpoint = entity.endpoints!.find((e) => e.name === name)!;
  const reads = readsBody(endpoint.method);
  return {
    summary:
      endpoint.description ??
      `${endpoint.name} (custom endpoint; needs ${entity.plural}:${endpoint.action}${endpoint.byId ? '[:own|:all]' : ''})`,
    // No query parameters (but the locale where the app has locales).
    query: NO_QUERY,
    ...(reads
      ? {
          body: objectSchema(endpoint.body ?? [], 'create'),
          bodyOptional: !endpoint.body?.some((f) => f.required),
          bodyCheckedBy: 'entity' as const,
        }
      : {}),
    response:
      endpoint.response === 'record'
        ? single(entity)
        : { type: 'object', properties: { data: {} }, required: ['data'] },
    errors: [
      'UNAUTHORIZED',
      'FORBIDDEN',
      'VALIDATION_ERROR',
      'CONFLICT',
      'UNPROCESSABLE_ENTITY',
      ...(endpoint.byId ? (['NOT_FOUND'] as ErrorCode[]) : []),
      ...(reads ? (['PAYLOAD_TOO_LARGE'] as ErrorCode[]) : []),
    ],
    localized: true,
  };
}

/** A reverse relation: the related entity's list, narrowed to the records referencing this one. */
function relationParts(entity: EntityModel, name: string, related: ReadonlyMap<string, EntityModel>): Declared {
  const relation = entity.relations!.find((r) => r.name === name)!;
  const target = related.get(relation.entity)!;
  return {
    summary:
      relation.description ??
      `${relation.label}: the ${target.label} whose ${relation.field} references this ${entity.name}, with the list's query parameters`,
    grammar: { parser: 'list', parameters: listGrammar(target) },
    response: Component(`${target.name}List`),
    errors: [...BY_ID, 'VALIDATION_ERROR'],
    localized: true,
  };
}

/** The routes of one entity, in match order; `related`: the app's entities by plural (reverse relations name them). */
export function entityRoutes(entity: EntityModel, related: ReadonlyMap<string, EntityModel>): EntityRouteDeclaration[] {
  return placesOf(entity).map((place) => declaration(entity, place, related));
}

/** Every kind of route declared for `entity`, whether it has it or not: the typed client's generic class. */
export function everyEntityRoute(entity: EntityModel): EntityRouteDeclaration[] {
  return [...KINDS, ...TRACKED].map((kind) => declaration(entity, kind, new Map()));
}

/** Every entity route of the app. */
export function entityDeclarations(model: AppModel): EntityRouteDeclaration[] {
  const byPlural = new Map(model.entities.map((e) => [e.plural, e]));
  return model.entities.flatMap((entity) => entityRoutes(entity, byPlural));
}

/** The route table a generated router declares: method, Express path below /api/v1, operation. */
export function entityRouteTable(entity: EntityModel): RouteSpec[] {
  return placesOf(entity).map((place) => [
    place.method,
    `/${entity.plural}${place.path.replace(/\{([A-Za-z]+)\}/g, ':$1')}`,
    place.name,
  ]);
}
