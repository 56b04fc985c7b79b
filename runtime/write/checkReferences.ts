import { andWhere } from '../access/accessFor.js';
import { scopeFor } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, newDetails } from '../errors/apiError.js';
import type { EntityModel, FieldModel } from '../model/types.js';
import type { Where } from '../store/types.js';

/** Ids looked up per query. */
const CHUNK = 500;
/** The caller may not view the referenced entity at all: no id of it counts as seen. */
const NOTHING: Where = { field: 'id', op: 'in', value: [] };

/** One set of values to check, with the prefix its details go under (`items.3.` for a bulk item). */
export interface ReferencingValues {
  values: Record<string, unknown>;
  prefix?: string;
}

/** The entity an objectId field (or array of objectIds) of `field` points to, if any. */
function referenceOf(field: FieldModel): string | undefined {
  if (field.type === 'objectId') return field.ref;
  if (field.type === 'array' && field.items?.type === 'objectId') return field.items.ref;
  return undefined;
}

/**
 * Every id a client puts into a reference field must name a record that exists and that the
 * caller could see (the referenced entity's view constraint; records of internal entities, such
 * as users, need only exist). Otherwise 422 UNPROCESSABLE_ENTITY with each such field in
 * `details`, so an id cannot be used to learn of a record the caller may not see either.
 */
export async function checkReferences(
  ctx: RuntimeContext,
  caller: Caller,
  entity: EntityModel,
  sets: readonly ReferencingValues[],
): Promise<void> {
  // Referenced entity -> id -> the detail keys that name it.
  const wanted = new Map<string, Map<string, string[]>>();
  for (const field of entity.fields) {
    const ref = referenceOf(field);
    if (!ref || field.system) continue;
    for (const { values, prefix = '' } of sets) {
      const value = values[field.name];
      const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
      ids.forEach((id, i) => {
        if (typeof id !== 'string') return;
        const key = Array.isArray(value) ? `${prefix}${field.name}.${i}` : `${prefix}${field.name}`;
        const byId = wanted.get(ref) ?? new Map<string, string[]>();
        byId.set(id, [...(byId.get(id) ?? []), key]);
        wanted.set(ref, byId);
      });
    }
  }
  if (wanted.size === 0) return;
  const details = newDetails();
  for (const [ref, byId] of wanted) {
    const model = ctx.registry.entities.get(ref)?.model;
    if (!model) continue;
    let visible: Where | undefined;
    if (!model.internal) {
      try {
        visible = await scopeFor(ctx, caller, model, 'view');
      } catch {
        visible = NOTHING;
      }
    }
    const ids = [...byId.keys()];
    const found = new Set<string>();
    for (let start = 0; start < ids.length; start += CHUNK) {
      const chunk = ids.slice(start, start + CHUNK);
      const rows = await ctx.store.find(ref, {
        where: andWhere(visible, { field: 'id', op: 'in', value: chunk }),
        select: ['id'],
        limit: chunk.length,
      });
      for (const row of rows) found.add(row.id);
    }
    for (const [id, keys] of byId) {
      if (found.has(id)) continue;
      for (const key of keys) details[key] = `names no ${model.name} you can see (${id})`;
    }
  }
  if (Object.keys(details).length > 0)
    throw new ApiError(
      'UNPROCESSABLE_ENTITY',
      'A reference names a record that does not exist or that you may not see',
      details,
    );
}
