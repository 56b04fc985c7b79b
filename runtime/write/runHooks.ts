import type { Caller } from '../context/caller.js';
import type { EntityHooks, HookName, WriteOperation } from '../context/hookTypes.js';
import type { RepositoryScope, RuntimeContext } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import { serverSetFields, writableFields } from '../model/entityRoutes.js';
import type { EntityModel } from '../model/types.js';
import { validationDetails } from '../model/validationDetails.js';
import { traceOf } from '../store/tracedStore.js';
import type { Doc } from '../store/types.js';
import { inSpan } from '../telemetry/tracing.js';

/** How deep writes through hook repositories may nest (a hook's write running another entity's hooks). */
export const MAX_HOOK_DEPTH = 8;

/**
 * One write in progress: its transaction (ctx.store), who asked, its clock, and how deep it is
 * nested (0 for a request's own write, +1 for each write made through a hook's repositories).
 */
export interface WriteScope extends RepositoryScope {
  operation: WriteOperation;
}

/** The scope of an operation's own write, in the transaction `store`. */
export function writeScope(ctx: RuntimeContext, caller: Caller, now: Date, operation: WriteOperation): WriteScope {
  return { ctx, caller, now, operation, origin: ctx.origin ?? 'http', depth: 0, path: [] };
}

/**
 * A hook threw something other than an ApiError, or returned what its entity refuses: a fault
 * of the application, logged, answered 500. The hook's own error travels as `hookError`, not as
 * `cause`: loggers append a cause's message to the error's, and the message already tells it.
 */
export class HookFailed extends Error {
  readonly hookError?: Error;
  constructor(plural: string, hook: HookName, problem: unknown) {
    super(`hook ${plural}.${hook} failed: ${problem instanceof Error ? problem.message : String(problem)}`);
    this.name = 'HookFailed';
    if (problem instanceof Error) this.hookError = problem;
  }
}

/** beforeCreate: the writable part of the new record's values (after defaults and macros), possibly changed. */
export async function runBeforeCreate(
  scope: WriteScope,
  plural: string,
  values: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const hook = hooksOf(scope, plural)?.beforeCreate;
  if (!hook) return values;
  const { writable, rest } = splitWritable(scope, plural, values);
  const result = await call(scope, plural, 'beforeCreate', () => hook(hookArgs(scope, plural, { data: writable })));
  if (result === undefined) return values;
  checkResult(scope, plural, 'beforeCreate', result, 'create');
  // The hook's values last: it may set read-only fields (the schema refuses system ones).
  return { ...rest, ...(result as Record<string, unknown>) };
}

/** beforeUpdate: the patch (writable fields only), possibly changed; `existing` is the stored record. */
export async function runBeforeUpdate(
  scope: WriteScope,
  plural: string,
  id: string,
  patch: Record<string, unknown>,
  existing: Doc,
): Promise<Record<string, unknown>> {
  const hook = hooksOf(scope, plural)?.beforeUpdate;
  if (!hook) return patch;
  const { writable, rest } = splitWritable(scope, plural, patch);
  const result = await call(scope, plural, 'beforeUpdate', () =>
    hook(hookArgs(scope, plural, { id, data: writable, existing: existing as never })),
  );
  if (result === undefined) return patch;
  checkResult(scope, plural, 'beforeUpdate', result, 'update');
  return { ...rest, ...(result as Record<string, unknown>) };
}

export async function runBeforeDelete(scope: WriteScope, plural: string, id: string, existing: Doc): Promise<void> {
  const hook = hooksOf(scope, plural)?.beforeDelete;
  if (!hook) return;
  await call(scope, plural, 'beforeDelete', () => hook(hookArgs(scope, plural, { id, existing: existing as never })));
}

/** Whether an entity has any before-hook (the operations then always write in a transaction). */
export function hasBeforeHooks(ctx: RuntimeContext, plural: string): boolean {
  const hooks = ctx.hooks.get(plural);
  return Boolean(hooks?.beforeCreate || hooks?.beforeUpdate || hooks?.beforeDelete);
}

function hooksOf(scope: WriteScope, plural: string): EntityHooks | undefined {
  return scope.ctx.hooks.get(plural);
}

/** A hook's arguments; `repositories` is built on first use (most hooks never touch it). */
function hookArgs<T extends object>(scope: WriteScope, plural: string, extra: T) {
  let repositories: unknown;
  const args = {
    caller: scope.caller,
    now: scope.now,
    operation: scope.operation,
    origin: scope.origin,
    get repositories() {
      repositories ??= scope.ctx.repositoriesFor?.({ ...scope, depth: scope.depth + 1, path: [...scope.path, plural] });
      return repositories;
    },
  };
  return Object.assign(args, extra);
}

async function call<T>(scope: WriteScope, plural: string, hook: HookName, run: () => T | Promise<T>): Promise<T> {
  try {
    const parent = traceOf(scope.ctx.store);
    if (parent === undefined) return await run();
    return await inSpan(
      `hook ${hook} ${plural}`,
      { attributes: { 'entigen.hook': hook, 'entigen.entity': plural }, parent },
      async () => run(),
    );
  } catch (error) {
    if (error instanceof ApiError || error instanceof HookFailed) throw error;
    throw new HookFailed(plural, hook, error);
  }
}

/** The writable field names of each entity model, computed once. */
const writableNames = new WeakMap<EntityModel, ReadonlySet<string>>();

function splitWritable(scope: WriteScope, plural: string, values: Record<string, unknown>) {
  const model = scope.ctx.registry.entities.get(plural)!.model;
  let names = writableNames.get(model);
  if (!names) {
    names = new Set(writableFields(model).map((f) => f.name));
    writableNames.set(model, names);
  }
  const writable: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) (names.has(key) ? writable : rest)[key] = value;
  return { writable, rest };
}

/**
 * What a hook returns must be a body a client could have sent, plus any read-only field, valid
 * for its type and constraints: else the write fails (500) and nothing is stored.
 */
function checkResult(
  scope: WriteScope,
  plural: string,
  hook: HookName,
  result: unknown,
  as: 'create' | 'update',
): void {
  const { validators, model } = scope.ctx.registry.entities.get(plural)!;
  let details: Record<string, string>;
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    details = validationDetails(validators[as](result) ? [] : (validators[as].errors ?? []));
  } else {
    const serverSet = serverSetNames(model);
    const body: Record<string, unknown> = {};
    const set: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(result)) (serverSet.has(key) ? set : body)[key] = value;
    details = {
      ...(validators[as](body) ? {} : validationDetails(validators[as].errors ?? [])),
      ...(validators.serverSet(set) ? {} : validationDetails(validators.serverSet.errors ?? [])),
    };
  }
  if (Object.keys(details).length === 0) return;
  throw new HookFailed(plural, hook, `returned data the ${as} schema refuses: ${problemList(details)}`);
}

/**
 * The read-only fields server code sets through a repository (an endpoint's total, a job's SLA
 * deadline): each must be valid for its type and constraints, else the write is refused (the
 * code's fault: a 500 in a request, a failed run in a job) and nothing is stored.
 */
export function checkServerSet(
  ctx: RuntimeContext,
  plural: string,
  values: Record<string, unknown>,
  as: 'create' | 'update',
): void {
  const { validators, model } = ctx.registry.entities.get(plural)!;
  const names = serverSetNames(model);
  if (names.size === 0) return;
  const set: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) if (names.has(key)) set[key] = value;
  if (Object.keys(set).length === 0 || validators.serverSet(set)) return;
  const problems = problemList(validationDetails(validators.serverSet.errors ?? []));
  throw new Error(`repositories.${plural}.${as} refused a read-only value: ${problems}`);
}

/** `total must be >= 0; note must be ...`: validation details as one line of a log. */
function problemList(details: Record<string, string>): string {
  return Object.entries(details)
    .map(([field, message]) => `${field} ${message}`)
    .join('; ');
}

/** The read-only field names of each entity model, computed once. */
const serverSetNamesOf = new WeakMap<EntityModel, ReadonlySet<string>>();

function serverSetNames(model: EntityModel): ReadonlySet<string> {
  let names = serverSetNamesOf.get(model);
  if (!names) {
    names = new Set(serverSetFields(model).map((f) => f.name));
    serverSetNamesOf.set(model, names);
  }
  return names;
}
