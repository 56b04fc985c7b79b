import type { ErrorCode } from '../errors/apiError.js';
import type { RouteSpec } from '../model/entityRoutes.js';
import type { AppModel, EntityModel } from '../model/types.js';
import { objectSchema } from '../model/valueSchema.js';
import { listGrammar } from './entityParameters.js';
import {
  API_PREFIX,
  BY_ID,
  type Declared,
  type EntityRouteDeclaration,
  type EntityRouteKind,
  NO_QUERY,
  single,
} from './entityRoute.js';
import { HISTORY_ROUTES, TRACKED_ROUTES } from './historyRoutes.js';
import { RECORD_ROUTES } from './recordRoutes.js';
import { Component } from './schemas.js';

export { API_PREFIX, type EntityRouteDeclaration } from './entityRoute.js';

// Every route of an entity, declared once: the router and its fast lane, the input checks, the
// OpenAPI operations and the typed client's methods are all derived from these declarations.

/** Match order: fixed paths before `{id}`; custom endpoints come first, reverse relations after these. */
const KINDS: EntityRouteKind[] = [...RECORD_ROUTES, ...HISTORY_ROUTES];

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
    ...kinds(TRACKED_ROUTES),
  ];
}

const KIND_BY_NAME = new Map([...KINDS, ...TRACKED_ROUTES].map((kind) => [kind.name as string, kind]));

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
  return [...KINDS, ...TRACKED_ROUTES].map((kind) => declaration(entity, kind, new Map()));
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
