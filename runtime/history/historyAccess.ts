import { scopeFor } from '../access/requireAccess.js';
import { settleThroughFor } from '../access/settleThrough.js';
import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { notFound } from '../errors/apiError.js';
import { AUDIT_LOGS, ENTITY_VERSIONS } from '../model/collections.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { EntityModel } from '../model/types.js';
import { matchesWhere } from '../store/common/matchesWhere.js';
import type { Doc, Where } from '../store/types.js';

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

export const ofRecord = (entity: EntityModel, id: string): Where => ({
  and: [
    { field: 'entity', op: 'eq', value: entity.plural },
    { field: 'entityId', op: 'eq', value: id },
  ],
});

/**
 * Reading history needs the entity's view permission and a record the caller may view: the
 * live record through the store, or, once deleted, its last state rebuilt from its history.
 * Answers that record (whose owner decides the fields an `owner` may see in its history).
 */
export async function requireHistoryAccess(
  ctx: RuntimeContext,
  entity: EntityModel,
  id: string,
  caller: Caller,
): Promise<Doc> {
  const viewable = await scopeFor(ctx, caller, entity, 'view');
  if (!OBJECT_ID.test(id)) throw notFound(entity.name);
  const found = await ctx.store.get(entity.plural, id, viewable);
  if (found) return found;
  if (await ctx.store.get(entity.plural, id)) throw notFound(entity.name);
  const last = await lastKnownState(ctx, entity, id);
  if (!last || !matchesWhere(last, await settleThroughFor(ctx.store, viewable, last))) throw notFound(entity.name);
  return last;
}

async function lastKnownState(ctx: RuntimeContext, entity: EntityModel, id: string): Promise<Doc | undefined> {
  if (entity.versioning === 'full') {
    const [latest] = await ctx.store.find(ENTITY_VERSIONS, {
      where: ofRecord(entity, id),
      sort: [{ field: 'version', direction: 'desc' }],
      limit: 1,
    });
    return latest?.snapshot as Doc | undefined;
  }
  if (entity.versioning === 'simple') {
    const entries = await ctx.store.find(AUDIT_LOGS, {
      where: ofRecord(entity, id),
      sort: [{ field: 'id', direction: 'asc' }],
      limit: 10_000,
    });
    if (entries.length === 0) return undefined;
    // Replaying the recorded diffs rebuilds the fields that access rules look at.
    const state: Record<string, unknown> = { id };
    for (const entry of entries)
      for (const [field, diff] of Object.entries((entry.changes as Record<string, { new: unknown }>) ?? {}))
        state[field] = diff.new;
    return state as Doc;
  }
  return undefined;
}
