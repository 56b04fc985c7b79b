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
