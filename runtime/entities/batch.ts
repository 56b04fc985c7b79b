import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, type ErrorDetails, newDetails } from '../errors/apiError.js';
import type { BatchOp } from '../model/batch.js';
import { UniqueConflict } from '../store/types.js';
import { archiveOperation, restoreOperation } from './archive.js';
import { createOperation } from './create.js';
import { endpointOperation } from './endpoint.js';
import { incrementOperation } from './increment.js';
import { removeOperation } from './remove.js';
import { updateOperation } from './update.js';

/** One operation of POST /api/v1/batch, as the request gives it. */
export interface BatchOperation {
  op: BatchOp;
  entity: string;
  id?: string;
  body?: unknown;
  /** `delete` of an entity with a trash: delete for good. */
  permanent?: boolean;
  /** `endpoint`: the custom endpoint's name. */
  name?: string;
}

/** What one operation answered: the status and body its own request would have had. */
export interface BatchResult {
  status: number;
  body: { data: unknown };
}

/** `$2.id`, `$0.items.1.id`: a value of an earlier operation's answer (its `data`). */
const REFERENCE = /^\$(\d{1,3})((?:\.[A-Za-z0-9_]+)+)$/;

/**
 * POST /api/v1/batch: the operations in order, in one transaction, each authorised, validated,
 * hooked and logged as if sent alone; all commit or none does. A string that is exactly
 * `$N.path` (in `id` or anywhere in `body`) is replaced by that value of operation N's answer,
 * which must come earlier. A failure answers the failing operation's error, with its index.
 */
export async function batchOperation(
  ctx: RuntimeContext,
  caller: Caller,
  operations: readonly BatchOperation[],
  changeReason?: string,
): Promise<{ results: BatchResult[] }> {
  checkOperations(ctx, operations);
  const committed = new Set<string | undefined>();
  const results: BatchResult[] = [];
  let current = 0;
  try {
    await ctx.store.transaction(async (store) => {
      // Each operation's writes join this transaction; their listeners hear of them after it commits.
      const inner: RuntimeContext = {
        ...ctx,
        store,
        origin: 'batch',
        notifyCommitted: (entity) => void committed.add(entity),
      };
      for (const [index, operation] of operations.entries()) {
        current = index;
        results.push(await run(inner, caller, resolveReferences(operation, results), changeReason));
      }
    });
  } catch (error) {
    throw failedAt(current, operations[current], error);
  }
  for (const entity of committed) ctx.notifyCommitted?.(entity);
  return { results };
}

async function run(
  ctx: RuntimeContext,
  caller: Caller,
  operation: BatchOperation,
  changeReason: string | undefined,
): Promise<BatchResult> {
  const plural = operation.entity;
  const id = operation.id as string;
  // Plain values of localized fields are the default locale's; answers hold every locale.
  const body = operation.body;
  switch (operation.op) {
    case 'create':
      return { status: 201, body: { data: await createOperation({ ctx, plural, body, caller, changeReason }) } };
    case 'update':
      return { status: 200, body: { data: await updateOperation({ ctx, plural, id, body, caller, changeReason }) } };
    case 'increment':
      return {
        status: 200,
        body: { data: await incrementOperation({ ctx, plural, id, body, caller, changeReason }) },
      };
    case 'archive':
      return { status: 200, body: { data: await archiveOperation({ ctx, plural, id, caller, changeReason }) } };
    case 'restore':
      return { status: 200, body: { data: await restoreOperation({ ctx, plural, id, caller, changeReason }) } };
    case 'delete':
      return {
        status: 200,
        body: {
          data: await removeOperation({ ctx, plural, id, caller, changeReason, permanent: operation.permanent }),
        },
      };
    case 'endpoint':
      return {
        status: 200,
        body: { data: await endpointOperation({ ctx, plural, name: operation.name!, id: operation.id, body, caller }) },
      };
  }
}

/**
 * What can be known before anything runs: each operation names an entity with generic routes,
 * an id where it needs one, an existing endpoint, and references only to earlier operations.
 * Every problem is reported at once, as `operations.<i>.<key>`.
 */
function checkOperations(ctx: RuntimeContext, operations: readonly BatchOperation[]): void {
  const details = newDetails();
  for (const [index, operation] of operations.entries()) {
    const at = `operations.${index}`;
    const entity = ctx.registry.entities.get(operation.entity);
    if (!entity || entity.model.internal || entity.routes.length === 0) {
      details[`${at}.entity`] = `"${operation.entity}" is not an entity of this API`;
      continue;
    }
    const model = entity.model;
    const endpoint =
      operation.op === 'endpoint' ? (model.endpoints ?? []).find((e) => e.name === operation.name) : undefined;
    if (operation.op === 'endpoint' && !endpoint)
      details[`${at}.name`] = model.endpoints?.length
        ? `must be one of ${model.endpoints.map((e) => e.name).join(', ')}`
        : `${model.plural} have no custom endpoints`;
    if (operation.op !== 'endpoint' && operation.name !== undefined) details[`${at}.name`] = 'is only for op endpoint';
    const needsId = !['create', 'endpoint'].includes(operation.op) || endpoint?.byId === true;
    if (needsId && operation.id === undefined) details[`${at}.id`] = `is required for ${operation.op}`;
    if (!needsId && operation.id !== undefined && operation.op === 'create') details[`${at}.id`] = 'is not for create';
    if (endpoint && !endpoint.byId && operation.id !== undefined)
      details[`${at}.id`] = `is not for the endpoint ${endpoint.name}`;
    if (['create', 'update', 'increment'].includes(operation.op) && operation.body === undefined)
      details[`${at}.body`] = `is required for ${operation.op}`;
    if (['archive', 'restore', 'delete'].includes(operation.op) && operation.body !== undefined)
      details[`${at}.body`] = `is not for ${operation.op}`;
    if (operation.permanent !== undefined && operation.op !== 'delete')
      details[`${at}.permanent`] = 'is only for op delete';
    if (operation.op === 'archive' || operation.op === 'restore') {
      if (model.ownership !== 'owned') details[`${at}.op`] = `${model.plural} cannot be archived`;
    }
    for (const [path, reference] of referencesIn(operation)) {
      const target = Number(REFERENCE.exec(reference)![1]);
      if (target >= index) details[`${at}.${path}`] = `${reference} must name an earlier operation`;
    }
  }
  if (Object.keys(details).length > 0) throw new ApiError('VALIDATION_ERROR', 'Invalid batch', details);
}

/** Every `$N.path` string of an operation's id and body, with where it stands. */
function referencesIn(operation: BatchOperation): [string, string][] {
  const found: [string, string][] = [];
  const walk = (value: unknown, path: string, depth: number) => {
    if (typeof value === 'string') {
      if (REFERENCE.test(value)) found.push([path, value]);
    } else if (value && typeof value === 'object' && depth < 64) {
      for (const [key, item] of Object.entries(value)) walk(item, `${path}.${key}`, depth + 1);
    }
  };
  walk(operation.id, 'id', 0);
  walk(operation.body, 'body', 0);
  return found;
}

/** The operation with its references replaced by the values of earlier answers. */
function resolveReferences(operation: BatchOperation, results: BatchResult[]): BatchOperation {
  const details = newDetails();
  const resolve = (value: unknown, path: string): unknown => {
    if (typeof value === 'string') {
      const match = REFERENCE.exec(value);
      if (!match) return value;
      let found: unknown = results[Number(match[1])]?.body.data;
      for (const key of match[2].slice(1).split('.')) {
        found =
          found !== null && typeof found === 'object' && Object.hasOwn(found, key)
            ? (found as Record<string, unknown>)[key]
            : undefined;
      }
      if (found === undefined) details[path] = `${value}: operation ${match[1]}'s answer has no ${match[2].slice(1)}`;
      return found;
    }
    if (Array.isArray(value)) return value.map((item, i) => resolve(item, `${path}.${i}`));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, `${path}.${key}`)]));
    return value;
  };
  const resolved: BatchOperation = {
    ...operation,
    ...(operation.id !== undefined ? { id: resolve(operation.id, 'id') as string } : {}),
    ...(operation.body !== undefined ? { body: resolve(operation.body, 'body') } : {}),
  };
  if (Object.keys(details).length > 0) throw new ApiError('VALIDATION_ERROR', 'A reference has no value', details);
  if (resolved.id !== undefined && typeof resolved.id !== 'string')
    throw new ApiError('VALIDATION_ERROR', 'A reference has no value', { id: 'must be a string' });
  return resolved;
}

/**
 * The error of the operation at `index`, said to be its: the code and status it had, the message
 * naming the operation, and its details under `operations.<index>.`. Nothing was stored.
 */
function failedAt(index: number, operation: BatchOperation, error: unknown): unknown {
  const cause =
    error instanceof UniqueConflict
      ? new ApiError('CONFLICT', `Another record already has this ${error.field}`, { [error.field]: 'must be unique' })
      : error;
  if (!(cause instanceof ApiError)) return error;
  const details: ErrorDetails = newDetails();
  details.operation = String(index);
  for (const [key, message] of Object.entries(cause.details ?? {})) details[`operations.${index}.${key}`] = message;
  if (Object.keys(cause.details ?? {}).length === 0) details[`operations.${index}`] = cause.message;
  const what = `${operation.op} ${operation.entity}${operation.name ? ` ${operation.name}` : ''}`;
  const failed = new ApiError(
    cause.code,
    `Operation ${index} (${what}) failed, nothing was stored: ${cause.message}`,
    details,
    cause,
  );
  failed.retryAfterSeconds = cause.retryAfterSeconds;
  return failed;
}
