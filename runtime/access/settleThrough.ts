import type { Store, Where } from '../store/types.js';

const ALWAYS: Where = { and: [] };
const NEVER: Where = { or: [] };

/**
 * A constraint made ready for matchesWhere on one record: each `through` condition decided
 * by asking the store whether the record's reference (any of them, for an array) is a record
 * matching the inner constraint. Used where a record is judged in memory (a new record, an
 * event's before and after states, the last state of a deleted record).
 */
export async function settleThroughFor(
  store: Store,
  where: Where | undefined,
  record: Record<string, unknown>,
): Promise<Where | undefined> {
  if (!where) return where;
  if ('and' in where) return { and: await Promise.all(where.and.map((w) => settled(store, w, record))) };
  if ('or' in where) return { or: await Promise.all(where.or.map((w) => settled(store, w, record))) };
  if ('not' in where) return { not: await settled(store, where.not, record) };
  if (!('through' in where)) return where;
  const { field, collection, where: inner, viewScopePending, ids: known } = where.through;
  if (viewScopePending) return NEVER;
  const value = record[field];
  const ids = (Array.isArray(value) ? value : [value]).filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return NEVER;
  if (known) return ids.some((id) => known.includes(id)) ? ALWAYS : NEVER;
  const byId: Where = { field: 'id', op: 'in', value: ids };
  const found = await store.count(collection, { where: inner ? { and: [byId, inner] } : byId });
  return found > 0 ? ALWAYS : NEVER;
}

async function settled(store: Store, where: Where, record: Record<string, unknown>): Promise<Where> {
  return (await settleThroughFor(store, where, record)) ?? ALWAYS;
}
