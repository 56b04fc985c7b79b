import { normalizeSearch, searchText } from '../common/searchText.js';
import { foldText, naturalSortKey } from '../common/sortKey.js';
import type { TableLayout } from '../common/tableLayout.js';
import type { Doc, IncrementInput, UpdateSet } from '../types.js';
import { type MongoLayout, SEARCH_FIELD } from './translate.js';

// How a record is kept in MongoDB: `_id` is the id, unset fields are absent (so `$inc` starts
// from nothing and unique indexes skip them), text fields carry their natural-order key, and
// searchable records their normalized words.

export type MongoDoc = Record<string, unknown> & { _id: string };

export function mongoLayout(layout: TableLayout): MongoLayout {
  return {
    sortKeyFields: new Set([...layout.columns.values()].filter((c) => c.sortKey).map((c) => c.field)),
    foldFields: new Set([...layout.columns.values()].filter((c) => c.fold).map((c) => c.field)),
    searchable: layout.searchFields.length > 0,
  };
}

/** Lower case, accents removed, split into words, each once. */
export function searchWords(layout: TableLayout, doc: Record<string, unknown>): string[] {
  const text = layout.searchFields.map((f) => searchText(doc[f])).join(' ');
  const words = text
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .map(normalizeSearch);
  return [...new Set(words)];
}

export function toMongoDoc(layout: TableLayout, doc: Doc): MongoDoc {
  const out: MongoDoc = { _id: doc.id };
  for (const column of layout.columns.values()) {
    const value = doc[column.field];
    if (column.field === 'id' || value === null || value === undefined) continue;
    out[column.field] = value;
    if (column.sortKey && typeof value === 'string') out[column.sortKey] = naturalSortKey(value);
    if (column.fold && typeof value === 'string') out[column.fold] = foldText(value);
  }
  if (layout.searchFields.length > 0) out[SEARCH_FIELD] = searchWords(layout, doc);
  return out;
}

/** A stored document back into a record: every (selected) field present, null when unset. */
export function fromMongoDoc(layout: TableLayout, stored: Record<string, unknown>, select?: string[]): Doc {
  const doc: Record<string, unknown> = {};
  for (const field of select ?? layout.columns.keys()) {
    if (!layout.columns.has(field)) continue;
    doc[field] = field === 'id' ? stored._id : (stored[field] ?? null);
  }
  return doc as Doc;
}

/** `$set` for values, `$unset` for nulls, sort keys alongside; `$inc` for increments. */
export function toMongoUpdate(
  layout: TableLayout,
  set: UpdateSet,
  by: IncrementInput = {},
): Record<string, Record<string, unknown>> {
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, ''> = {};
  for (const [field, value] of Object.entries(set)) {
    const column = layout.columns.get(field);
    if (!column || field === 'id' || value === undefined) continue;
    if (value === null) $unset[field] = '';
    else $set[field] = value;
    if (column.sortKey) {
      if (typeof value === 'string') $set[column.sortKey] = naturalSortKey(value);
      else $unset[column.sortKey] = '';
    }
    if (column.fold) {
      if (typeof value === 'string') $set[column.fold] = foldText(value);
      else $unset[column.fold] = '';
    }
  }
  const update: Record<string, Record<string, unknown>> = {};
  if (Object.keys($set).length > 0) update.$set = $set;
  if (Object.keys($unset).length > 0) update.$unset = $unset;
  if (Object.keys(by).length > 0) update.$inc = { ...by };
  return update;
}
