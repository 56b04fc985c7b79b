import type { Doc } from '../types.js';
import { naturalSortKey } from './sortKey.js';
import type { ColumnKind, TableLayout } from './tableLayout.js';

/** A document's value as a column stores it: JSON text for json columns, 0/1 for booleans. */
export function encodeValue(kind: ColumnKind, value: unknown, booleansAsIntegers: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'json') return JSON.stringify(value);
  if (kind === 'bool' && booleansAsIntegers) return value ? 1 : 0;
  return value;
}

export function decodeValue(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'json') return typeof value === 'string' ? JSON.parse(value) : value;
  if (kind === 'bool') return value === 1 || value === true || value === '1';
  if (kind === 'int' && typeof value === 'bigint') return Number(value);
  return value;
}

/** Column name -> stored value for the fields present in `values`, with their sort keys. */
export function encodeFields(layout: TableLayout, values: Record<string, unknown>, booleansAsIntegers: boolean): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [field, value] of Object.entries(values)) {
    const column = layout.columns.get(field);
    if (!column || value === undefined) continue;
    out.set(field, encodeValue(column.kind, value, booleansAsIntegers));
    if (column.sortKey) out.set(column.sortKey, typeof value === 'string' ? naturalSortKey(value) : null);
  }
  return out;
}

/** A row back into a document: every selected field present, null when unset. */
export function decodeRow(layout: TableLayout, row: Record<string, unknown>, select?: string[]): Doc {
  const doc: Record<string, unknown> = {};
  const fields = select ?? [...layout.columns.keys()];
  for (const field of fields) {
    const column = layout.columns.get(field);
    if (column) doc[field] = decodeValue(column.kind, row[field]);
  }
  return doc as Doc;
}

/** Text for the search index: string fields as they are, string arrays joined. */
export function searchText(value: unknown): string {
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string').join(' ');
  return typeof value === 'string' ? value : '';
}

/** Search text as every store compares it: lower case, accents removed. */
export function normalizeSearch(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** Characters of the search value a SQL store keeps; PostgreSQL's tsvector holds at most 1 MB. */
export const MAX_SEARCH_VALUE_LENGTH = 256 * 1024;

/**
 * The words of a record's search fields, each once, normalized: what `q` matches word
 * prefixes against. Repeats add nothing to a prefix match, so a long text shrinks to its
 * vocabulary; a vocabulary past MAX_SEARCH_VALUE_LENGTH is cut there.
 */
export function searchVocabulary(text: string): string {
  const words = new Set(text.normalize('NFKC').split(/[^\p{L}\p{N}]+/u).filter(Boolean).map(normalizeSearch));
  let out = '';
  for (const word of words) {
    if (out.length + word.length + 1 > MAX_SEARCH_VALUE_LENGTH) break;
    out += out ? ` ${word}` : word;
  }
  return out;
}

/** Query text -> the terms every one of which must match as a word prefix. */
export function searchTerms(text: string): string[] {
  return text
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 32);
}
