// Public runtime API: what generated code and application code import from `entigen/runtime`.
export { defineRegistry, type EntityValidators, type Registry } from './defineRegistry.js';
export { validationDetails, type CompiledValidator, type ValidationIssue } from './validation/validationDetails.js';
export { parsePermission, type Permission } from './access/parsePermission.js';
export type * from './model/types.js';
