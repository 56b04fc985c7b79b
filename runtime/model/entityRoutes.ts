import type { EntityModel, FieldModel } from './types.js';
import type { CompiledValidator } from './validationDetails.js';

/** The operations an entity's routes name; the runtime maps each to its handler. */
export type EntityRouteName =
  | 'list'
  | 'aggregate'
  | 'create'
  | 'bulkCreate'
  | 'get'
  | 'update'
  | 'remove'
  | 'increment'
  | 'archive'
  | 'restore'
  | 'restoreFromTrash'
  | 'metadata'
  | 'metadataType'
  | 'metadataFields'
  | 'metadataField'
  | 'versions'
  | 'version'
  | 'compareVersions'
  | 'revert'
  | 'audit'
  | 'fieldChanges'
  | 'decideFieldChange';

export type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** A custom endpoint's route: `endpoint:<name>`, served by the handler in the entity's hook module. */
export type EndpointRouteName = `endpoint:${string}`;

/** A reverse relation's list: `relation:<name>` (GET /{plural}/{id}/<name>). */
export type RelationRouteName = `relation:${string}`;

/** One route of an entity: method, path under /api/v1, and the operation that serves it. */
export type RouteSpec = readonly [
  method: RouteMethod,
  path: string,
  handler: EntityRouteName | EndpointRouteName | RelationRouteName,
];

/** The export name of an endpoint's body validator in generated/validators/<plural>.js. */
export function endpointValidatorName(endpoint: string): `endpoint_${string}` {
  return `endpoint_${endpoint}`;
}

/** The compiled validators of one entity, as generated/validators/<plural>.js exports them. */
export interface EntityValidators {
  create: CompiledValidator;
  update: CompiledValidator;
  bulkItem: CompiledValidator;
  increment: CompiledValidator;
  /** The read-only fields a before-hook may set (the rest of its result is checked as a body). */
  serverSet: CompiledValidator;
  /** One per custom endpoint that reads a body. */
  [endpoint: `endpoint_${string}`]: CompiledValidator;
}

/** What a generated router declares: the entity, its compiled validators and its routes. */
export interface EntityDefinition {
  plural: string;
  validators: EntityValidators;
  /** Absent for internal entities, which have no generic routes. */
  routes?: readonly RouteSpec[];
}

/** Fields a request body may set: not server-set, not hidden, not read-only. */
export function writableFields(entity: EntityModel): FieldModel[] {
  return entity.fields.filter((f) => !f.system && !f.hidden && !f.readOnly);
}

/** The writable numbers PATCH /{id}/increment may add to (one value each: not localized ones). */
export function incrementableFields(entity: EntityModel): FieldModel[] {
  return writableFields(entity).filter((f) => (f.type === 'int' || f.type === 'float') && !f.localized);
}

/** Fields only the server sets: read-only ones (not system, not hidden), which before-hooks may set. */
export function serverSetFields(entity: EntityModel): FieldModel[] {
  return entity.fields.filter((f) => !f.system && !f.hidden && f.readOnly);
}

/**
 * The routes an entity needs, in match order (fixed paths before `:id`); internal entities have
 * none. The generator writes them into the routers and the OpenAPI document; the runtime serves them.
 */
export function entityRouteTable(entity: EntityModel): RouteSpec[] {
  if (entity.internal) return [];
  const base = `/${entity.plural}`;
  const routes: RouteSpec[] = [
    // Custom endpoints first: a collection endpoint's fixed path must win over `:id`.
    ...(entity.endpoints ?? []).map(
      (endpoint): RouteSpec => [
        endpoint.method,
        `${base}${endpoint.path.replace('{id}', ':id')}`,
        `endpoint:${endpoint.name}`,
      ],
    ),
    ['GET', `${base}/metadata`, 'metadata'],
    ['GET', `${base}/metadata/type`, 'metadataType'],
    ['GET', `${base}/metadata/fields`, 'metadataFields'],
    ['GET', `${base}/metadata/field/:name`, 'metadataField'],
    ['GET', `${base}/aggregate`, 'aggregate'],
    ['GET', base, 'list'],
    ['POST', base, 'create'],
    ['POST', `${base}/bulk`, 'bulkCreate'],
    ['GET', `${base}/:id`, 'get'],
    ['PATCH', `${base}/:id`, 'update'],
    ['DELETE', `${base}/:id`, 'remove'],
  ];
  if (incrementableFields(entity).length > 0) routes.push(['PATCH', `${base}/:id/increment`, 'increment']);
  if (entity.ownership === 'owned')
    routes.push(['POST', `${base}/:id/archive`, 'archive'], ['POST', `${base}/:id/restore`, 'restore']);
  if (entity.trash) routes.push(['POST', `${base}/:id/restore-from-trash`, 'restoreFromTrash']);
  if (entity.versioning === 'full') {
    routes.push(
      ['GET', `${base}/:id/versions`, 'versions'],
      ['GET', `${base}/:id/versions/compare`, 'compareVersions'],
      ['GET', `${base}/:id/versions/:version`, 'version'],
      ['POST', `${base}/:id/revert/:version`, 'revert'],
    );
  }
  if (entity.versioning === 'simple') routes.push(['GET', `${base}/:id/audit`, 'audit']);
  for (const relation of entity.relations ?? [])
    routes.push(['GET', `${base}/:id/${relation.name}`, `relation:${relation.name}`]);
  if (entity.fields.some((f) => f.trackChanges)) {
    routes.push(
      ['GET', `${base}/:id/field-changes`, 'fieldChanges'],
      ['PUT', `${base}/:id/field-changes/:changeId`, 'decideFieldChange'],
    );
  }
  return routes;
}
