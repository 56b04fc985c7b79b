// Public runtime API: what generated code and application code import from `entigen/runtime`.

export { type Permission, parsePermission } from './access/parsePermission.js';
export type { Caller } from './context/caller.js';
export {
  defineEntityRoutes,
  defineRegistry,
  type EntityValidators,
  type OpenApiSource,
  type RegisteredEntity,
  type Registry,
} from './context/defineRegistry.js';
export type {
  AfterCommitArgs,
  ChangeEventName,
  EntityHooks,
  HookContext,
  HookModule,
  HookResult,
  PresentRecord,
  WriteOperation,
  WriteOrigin,
} from './context/hookTypes.js';
export { type RejectCode, reject } from './context/reject.js';
export type { RuntimeContext } from './context/runtimeContext.js';
export type { JobContext, JobHandler } from './jobs/scheduler.js';
export type { EntityDefinition, EntityRouteName, RouteSpec } from './model/entityRoutes.js';
export type * from './model/types.js';
export { type CompiledValidator, type ValidationIssue, validationDetails } from './model/validationDetails.js';
export {
  type AggregateOptions,
  type FilterOps,
  type FilterValue,
  type FindOptions,
  type Page,
  Repository,
  type RepositoryWriter,
} from './repository.js';
export {
  createEntigen,
  type Entigen,
  type RunningServer,
  type StartOptions,
  startServer,
} from './server/startServer.js';
export type { Doc, FindQuery, Store, Where } from './store/types.js';
