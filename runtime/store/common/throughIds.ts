import { MAX_THROUGH_IDS, QueryTooLarge, type Through, type Where } from '../types.js';
import type { TableLayout } from './tableLayout.js';

/**
 * For a store that cannot join (MongoDB): each `through` condition replaced by the ids it
 * reaches, fetched with `ids` (the inner condition settled the same way first). More than
 * MAX_THROUGH_IDS is refused rather than answered wrongly.
 */
export async function settleThroughByIds(
  where: Where | undefined,
  layout: TableLayout,
  ids: (collection: string, where: Where | undefined, limit: number) => Promise<string[]>,
): Promise<Where | undefined> {
  if (!where || !hasThrough(where)) return where;
  if ('and' in where) return { and: await Promise.all(where.and.map((w) => settle(w, layout, ids))) };
  if ('or' in where) return { or: await Promise.all(where.or.map((w) => settle(w, layout, ids))) };
  if ('not' in where) return { not: await settle(where.not, layout, ids) };
  if (!('through' in where)) return where;
  const { field, collection, where: inner } = where.through;
  const column = layout.columns.get(field);
  const target = layout.siblings?.get(collection);
  if (!column || !target || where.through.viewScopePending) return { or: [] };
  const found = where.through.ids
    ? [...where.through.ids]
    : await ids(collection, await settleThroughByIds(inner, target, ids), MAX_THROUGH_IDS + 1);
  if (found.length > MAX_THROUGH_IDS) {
    throw new QueryTooLarge(
      `A rule through ${layout.table}.${field} reaches more than ${MAX_THROUGH_IDS} ${collection}, more than this store (MongoDB) looks up for one query; narrow the request or the rule`,
    );
  }
  return column.kind === 'json' ? { field, op: 'contains', value: found } : { field, op: 'in', value: found };
}

async function settle(
  where: Where,
  layout: TableLayout,
  ids: (collection: string, where: Where | undefined, limit: number) => Promise<string[]>,
): Promise<Where> {
  return (await settleThroughByIds(where, layout, ids)) ?? { and: [] };
}

/** Whether a condition reaches through a reference anywhere in it. */
export function hasThrough(where: Where | undefined): boolean {
  if (!where) return false;
  if ('and' in where) return where.and.some(hasThrough);
  if ('or' in where) return where.or.some(hasThrough);
  if ('not' in where) return hasThrough(where.not);
  return 'through' in where;
}

/** The collections a condition reaches through references (each once), besides its own. */
export function throughCollections(where: Where | undefined, into: Set<string> = new Set()): Set<string> {
  if (!where) return into;
  if ('and' in where) for (const w of where.and) throughCollections(w, into);
  else if ('or' in where) for (const w of where.or) throughCollections(w, into);
  else if ('not' in where) throughCollections(where.not, into);
  else if ('through' in where) {
    into.add(where.through.collection);
    throughCollections(where.through.where, into);
  }
  return into;
}

/**
 * Each `through` condition given the ids it selects, where `ids` knows them (a cache): inner
 * conditions first, so a chain is answered from the bottom up. `ids` answers undefined to keep
 * the condition as it is (too many ids to remember, or nothing known).
 */
export async function withKnownIds(
  where: Where | undefined,
  ids: (through: Through, settledInner: Where | undefined) => Promise<readonly string[] | undefined>,
): Promise<Where | undefined> {
  if (!where || !hasThrough(where)) return where;
  if ('and' in where) return { and: await Promise.all(where.and.map((w) => known(w, ids))) };
  if ('or' in where) return { or: await Promise.all(where.or.map((w) => known(w, ids))) };
  if ('not' in where) return { not: await known(where.not, ids) };
  if (!('through' in where) || where.through.viewScopePending || where.through.ids) return where;
  const settledInner = await withKnownIds(where.through.where, ids);
  const found = await ids(where.through, settledInner);
  return { through: found ? { ...where.through, ids: found } : { ...where.through, where: settledInner } };
}

async function known(
  where: Where,
  ids: (through: Through, settledInner: Where | undefined) => Promise<readonly string[] | undefined>,
): Promise<Where> {
  return (await withKnownIds(where, ids)) ?? { and: [] };
}
