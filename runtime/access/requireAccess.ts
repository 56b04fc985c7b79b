import { type Caller, isAnonymous } from '../context/caller.js';
import { contextInTrace } from '../context/carryTrace.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, notFound } from '../errors/apiError.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { Action, EntityModel } from '../model/types.js';
import { matchesWhere } from '../store/common/matchesWhere.js';
import { hasThrough } from '../store/common/throughIds.js';
import { traceOf } from '../store/tracedStore.js';
import { NOT_TRASHED } from '../store/trashStore.js';
import type { Doc, Store, Where } from '../store/types.js';
import { inSpan } from '../telemetry/tracing.js';
import { type Access, accessFor, andWhere } from './accessFor.js';
import { grantedIds } from './grants.js';
import { MAX_THROUGH_DEPTH } from './permissionCondition.js';
import { settleThroughFor } from './settleThrough.js';
import { tenantWhere } from './tenancy.js';

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

/**
 * The records `action` may touch, as one constraint for the store, built in the spec's layers:
 * role permissions and ownership, widened by grants, narrowed to the caller's tenants. Throws
 * when nothing is allowed at all: 401 when anonymous, 403 when signed in.
 */
export function scopeFor(
  ctx: RuntimeContext,
  caller: Caller,
  entity: EntityModel,
  action: Action | string,
  depth = 0,
): Promise<Where | undefined> {
  // A span of its own where the rule reaches through a reference, and for the referenced entity's
  // scope resolved beneath it; a plain rule is a few comparisons, not worth a span.
  const access = accessFor(caller, entity, action);
  const parent = traceOf(ctx.store);
  if (parent === undefined || (depth === 0 && !reachesThrough(access)))
    return resolveScope(ctx, caller, entity, action, depth, access);
  return inSpan(
    `access ${action} ${entity.plural}`,
    {
      attributes: { 'entigen.entity': entity.plural, 'entigen.action': action, 'entigen.access.depth': depth },
      parent,
    },
    (_span, trace) => resolveScope(contextInTrace(ctx, trace), caller, entity, action, depth, access),
  );
}

function reachesThrough(access: Access): boolean {
  return access.allowed && access.where !== undefined && hasThrough(access.where);
}

async function resolveScope(
  ctx: RuntimeContext,
  caller: Caller,
  entity: EntityModel,
  action: Action | string,
  depth: number,
  access: Access,
): Promise<Where | undefined> {
  let allowed = access.allowed;
  let where = access.allowed ? await withViewScopes(ctx, caller, access.where, depth) : undefined;
  if (!caller.isAdmin && (!allowed || where)) {
    const shared = await grantedIds(ctx, caller, entity, action);
    if (shared.length > 0) {
      const byGrant: Where = { field: 'id', op: 'in', value: shared };
      where = allowed ? { or: [where!, byGrant] } : byGrant;
      allowed = true;
    }
  }
  if (!allowed) {
    throw isAnonymous(caller)
      ? new ApiError('UNAUTHORIZED')
      : new ApiError('FORBIDDEN', `You may not ${action} ${entity.plural}`);
  }
  return andWhere(where, await tenantWhere(ctx, caller, entity));
}

const NOTHING: Where = { or: [] };

/**
 * Each `@field` rule's pending condition given the caller's view scope of the entity the field
 * references (itself resolved the same way, at most MAX_THROUGH_DEPTH references deep): a
 * record passes when it references a record the caller may view.
 */
async function withViewScopes(
  ctx: RuntimeContext,
  caller: Caller,
  where: Where | undefined,
  depth: number,
): Promise<Where | undefined> {
  // Most constraints have no rule through a reference: returned as they are, not rebuilt.
  if (!where || !hasThrough(where)) return where;
  if ('and' in where) return { and: await Promise.all(where.and.map((w) => withViewScopesOf(ctx, caller, w, depth))) };
  if ('or' in where) return { or: await Promise.all(where.or.map((w) => withViewScopesOf(ctx, caller, w, depth))) };
  if ('not' in where) return { not: await withViewScopesOf(ctx, caller, where.not, depth) };
  if (!('through' in where) || !where.through.viewScopePending) return where;
  const target = ctx.registry.entities.get(where.through.collection)?.model;
  if (!target || depth >= MAX_THROUGH_DEPTH) return NOTHING;
  let inner: Where | undefined;
  try {
    inner = await scopeFor(ctx, caller, target, 'view', depth + 1);
  } catch (error) {
    if (error instanceof ApiError) return NOTHING;
    throw error;
  }
  // A parent in the trash is deleted to everyone: what it passes on goes with it.
  if (target.trash) inner = andWhere(inner, NOT_TRASHED);
  const { field, collection } = where.through;
  return { through: { field, collection, ...(inner ? { where: inner } : {}) } };
}

async function withViewScopesOf(ctx: RuntimeContext, caller: Caller, where: Where, depth: number): Promise<Where> {
  return (await withViewScopes(ctx, caller, where, depth)) ?? { and: [] };
}

/**
 * The caller's role permissions alone (no grants, no tenancy) for `action`, with rules through
 * references resolved: undefined when they reach every record, null when they reach none.
 */
export async function roleScope(
  ctx: RuntimeContext,
  caller: Caller,
  entity: EntityModel,
  action: Action | string,
): Promise<Where | undefined | null> {
  const access = accessFor(caller, entity, action);
  return access.allowed ? withViewScopes(ctx, caller, access.where, 0) : null;
}

/** The record if the caller may view it; 404 otherwise, so hidden records stay unknown. */
export async function findVisible(ctx: RuntimeContext, entity: EntityModel, id: string, caller: Caller): Promise<Doc> {
  const viewable = await scopeFor(ctx, caller, entity, 'view');
  if (!OBJECT_ID.test(id)) throw notFound(singular(entity));
  const doc = await ctx.store.get(entity.plural, id, viewable);
  if (!doc) throw notFound(singular(entity));
  return doc;
}

/**
 * For edit and delete: 401/403 without the permission, 404 when the record is not viewable,
 * 403 when it is viewable but outside the permission's scope. Returns the record and the
 * constraint to repeat in the write, so a change between read and write cannot widen it.
 */
export async function findWritable(
  ctx: RuntimeContext,
  entity: EntityModel,
  id: string,
  caller: Caller,
  action: 'edit' | 'delete' | string,
): Promise<{ doc: Doc; where: Where | undefined }> {
  const writable = await scopeFor(ctx, caller, entity, action);
  const doc = await findVisible(ctx, entity, id, caller);
  if (writable && !(await ctx.store.get(entity.plural, id, writable))) {
    throw new ApiError('FORBIDDEN', `You may not ${action} this ${singular(entity)}`);
  }
  return { doc, where: writable };
}

/**
 * A conditioned create permission (`tickets:create:assignee:{{user.id}}`, `comments:create:@ticket`)
 * holds only for new records that satisfy its condition: the constraint to check them against, if any.
 */
export async function creationRule(
  ctx: RuntimeContext,
  caller: Caller,
  entity: EntityModel,
): Promise<Where | undefined> {
  const access = accessFor(caller, entity, 'create');
  return access.allowed ? withViewScopes(ctx, caller, access.where, 0) : undefined;
}

/** 403 when the new record is outside the caller's create permission (see creationRule); `store` is the write's. */
export async function requireCreatable(
  store: Store,
  entity: EntityModel,
  rule: Where | undefined,
  doc: Doc,
): Promise<void> {
  if (rule && !matchesWhere(doc, await settleThroughFor(store, rule, doc))) {
    throw new ApiError(
      'FORBIDDEN',
      `You may not create this ${singular(entity)}: your create permission holds for other values`,
    );
  }
}

function singular(entity: EntityModel): string {
  return entity.name.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
}
