import { andWhere } from '../access/accessFor.js';
import { scopeFor } from './requireAccess.js';
import { ApiError } from '../http/errors.js';
import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import type { EntityModel } from '../model/types.js';
import { refOf } from '../query/parsePopulate.js';
import type { PopulateSpec } from '../query/listQuery.js';
import type { Doc, Where } from '../store/types.js';
import { presentRecord } from './presentRecord.js';

export type { PopulateSpec };

interface PathTree {
  [field: string]: PathTree;
}

/**
 * Replaces reference ids with the referenced records, one query per path level and entity
 * (no N+1). Records the caller may not view stay `{ id }`; users show only their display name.
 */
export async function populateRecords(ctx: RuntimeContext, entity: EntityModel, docs: Doc[], spec: PopulateSpec, caller: Caller): Promise<Doc[]> {
  const tree: PathTree = {};
  for (const path of spec.paths) {
    let node = tree;
    for (const segment of path) node = node[segment] ??= {};
  }
  await populateLevel(ctx, entity, docs, tree, caller);
  return docs;
}

async function populateLevel(ctx: RuntimeContext, entity: EntityModel, docs: Doc[], tree: PathTree, caller: Caller): Promise<void> {
  for (const [field, children] of Object.entries(tree)) {
    const ref = refOf(entity, field);
    const target = ref ? ctx.registry.entities.get(ref)?.model : undefined;
    if (!target) continue;
    const ids = new Set<string>();
    for (const doc of docs) for (const id of idsIn(doc[field])) ids.add(id);
    const found = ids.size > 0 ? await fetchVisible(ctx, target, [...ids], caller) : new Map<string, Doc>();
    if (Object.keys(children).length > 0) await populateLevel(ctx, target, [...found.values()], children, caller);
    for (const doc of docs) {
      const value = doc[field];
      const expand = (id: unknown) => (typeof id === 'string' ? (found.get(id) ?? { id }) : id);
      if (Array.isArray(value)) doc[field] = value.map(expand);
      else if (typeof value === 'string') doc[field] = expand(value);
    }
  }
}

async function fetchVisible(ctx: RuntimeContext, target: EntityModel, ids: string[], caller: Caller): Promise<Map<string, Doc>> {
  const byId: Where = { field: 'id', op: 'in', value: ids };
  if (target.plural === 'users') {
    const users = await ctx.store.find('users', { where: byId, select: ['displayName', 'email'] });
    return new Map(
      users.map((u) => [u.id, caller.isAdmin || caller.user?.id === u.id ? { id: u.id, displayName: u.displayName, email: u.email } : { id: u.id, displayName: u.displayName }]),
    );
  }
  let viewable: Where | undefined;
  try {
    viewable = await scopeFor(ctx, caller, target, 'view');
  } catch (error) {
    // No view permission on the referenced entity: every reference stays { id }.
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return new Map();
    throw error;
  }
  const found = await ctx.store.find(target.plural, { where: andWhere(byId, viewable), limit: ids.length });
  return new Map(found.map((doc) => [doc.id, presentRecord(target, doc)]));
}

function idsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

