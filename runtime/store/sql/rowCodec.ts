import { foldText, naturalSortKey } from '../common/sortKey.js';
import type { ColumnKind, TableLayout } from '../common/tableLayout.js';
import type { Doc } from '../types.js';

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

/** Column name -> stored value for the fields present in `values`, with their sort keys and folded text. */
export function encodeFields(
  layout: TableLayout,
  values: Record<string, unknown>,
  booleansAsIntegers: boolean,
): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [field, value] of Object.entries(values)) {
    const column = layout.columns.get(field);
    if (!column || value === undefined) continue;
    out.set(field, encodeValue(column.kind, value, booleansAsIntegers));
    if (column.sortKey) out.set(column.sortKey, typeof value === 'string' ? naturalSortKey(value) : null);
    if (column.fold) out.set(column.fold, typeof value === 'string' ? foldText(value) : null);
  }
  return out;
}

/** A row back into a document: every selected field present, null when unset. */
export function decodeRow(layout: TableLayout, row: Record<string, unknown>, select?: string[]): Doc {
  const doc: Record<string, unknown> = {};
  if (select === undefined) {
    for (const [field, column] of layout.columns) doc[field] = decodeValue(column.kind, row[field]);
    return doc as Doc;
  }
  for (const field of select) {
    const column = layout.columns.get(field);
    if (column) doc[field] = decodeValue(column.kind, row[field]);
  }
  return doc as Doc;
}
