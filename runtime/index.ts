// Public runtime API: what generated code and application code import from `entigen/runtime`.
export { defineEntityRoutes, defineRegistry, type EntityValidators, type Registry, type RegisteredEntity } from './defineRegistry.js';
export type { EntityDefinition, RouteSpec, EntityRouteName } from './model/entityRoutes.js';
export { Repository, type FindOptions } from './repository.js';
export type { Store, Doc, Where, FindQuery } from './store/types.js';
export type { RuntimeContext } from './context.js';
export type { Caller } from './access/caller.js';
export { validationDetails, type CompiledValidator, type ValidationIssue } from './validation/validationDetails.js';
export { parsePermission, type Permission } from './access/parsePermission.js';
export type * from './model/types.js';
export type { JobContext, JobHandler } from './jobs/scheduler.js';
