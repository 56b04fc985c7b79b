import { literalIfPlain } from '../common/compiledLiteral.js';
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

/** Per table: the compiled decoder of rows read as objects (null: names that cannot be compiled). */
const objectRows = new WeakMap<TableLayout, ((row: Record<string, unknown>) => Doc) | null>();

/** A row (as an object: the writes' RETURNING) back into a document: every field present, null when unset. */
export function decodeRow(layout: TableLayout, row: Record<string, unknown>): Doc {
  let decode = objectRows.get(layout);
  if (decode === undefined) {
    const fields = [...layout.columns.keys()];
    decode =
      literalIfPlain<Record<string, unknown>, Doc>(
        fields,
        (field) => `decodeValue(${JSON.stringify(layout.columns.get(field)!.kind)}, source[${JSON.stringify(field)}])`,
        { decodeValue },
      ) ?? null;
    objectRows.set(layout, decode);
  }
  if (decode) return decode(row);
  const doc: Record<string, unknown> = {};
  for (const [field, column] of layout.columns) doc[field] = decodeValue(column.kind, row[field]);
  return doc as Doc;
}

/** The fields of a SELECT's columns, in order, with their kinds: how a row read as values becomes a document. */
export interface RowShape {
  fields: readonly string[];
  kinds: readonly ColumnKind[];
  /** Whole rows: the shape's own decoder (compiledDecoder). */
  decode?: (values: readonly unknown[]) => Doc;
}

const wholeRows = new WeakMap<TableLayout, RowShape>();

/** The shape of rows of every field (`fieldList`'s order), or of `select` (as selectStatement lists it). */
export function rowShape(layout: TableLayout, select?: readonly string[]): RowShape {
  if (select === undefined) {
    let shape = wholeRows.get(layout);
    if (!shape) {
      const fields = [...layout.columns.keys()];
      const kinds = [...layout.columns.values()].map((c) => c.kind);
      shape = { fields, kinds, decode: compiledDecoder(fields, kinds) };
      wholeRows.set(layout, shape);
    }
    return shape;
  }
  return { fields: select, kinds: select.map((field) => layout.columns.get(field)!.kind) };
}

/**
 * A row read as its values (the driver's array mode) into a document. Drivers build such a row
 * without naming each column, which halves the cost of reading a page of wide records.
 */
export function decodeValues(shape: RowShape, values: readonly unknown[]): Doc {
  if (shape.decode) return shape.decode(values);
  const doc: Record<string, unknown> = {};
  for (let i = 0; i < shape.fields.length; i++) doc[shape.fields[i]] = decodeValue(shape.kinds[i], values[i]);
  return doc as Doc;
}

/** A table's whole-row decoder, compiled once (compiledLiteral.ts); none where a name is not plain. */
function compiledDecoder(
  fields: readonly string[],
  kinds: readonly ColumnKind[],
): ((values: readonly unknown[]) => Doc) | undefined {
  return literalIfPlain<readonly unknown[], Doc>(
    fields,
    (_, i) => `decodeValue(${JSON.stringify(kinds[i])}, source[${i}])`,
    { decodeValue },
  );
}
