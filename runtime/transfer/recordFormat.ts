import type { EntityModel, FieldModel } from '../model/types.js';

/** How records travel in and out: one JSON object per line, or CSV with a header row. */
export type TransferFormat = 'jsonl' | 'csv';

export function formatOf(path: string, given?: string): TransferFormat {
  const format = given ?? (/\.csv$/i.test(path) ? 'csv' : /\.jsonl?$/i.test(path) ? 'jsonl' : undefined);
  if (format !== 'jsonl' && format !== 'csv')
    throw new Error(`--format must be jsonl or csv${given ? `, not "${given}"` : ' (the file name does not say)'}`);
  return format;
}

/** The columns of a CSV export: every field a response shows, in the entity's order. */
export function csvColumns(entity: EntityModel): FieldModel[] {
  return entity.fields.filter((field) => !field.hidden);
}

const STRUCTURED = new Set(['array', 'object', 'any']);

/**
 * Text a spreadsheet would run as a formula (CSV injection): a leading `=`, `+`, `-`, `@`, tab or
 * carriage return. Such a cell gets a leading apostrophe, and so does one that starts with an
 * apostrophe already, so that `fromCell` can take exactly one away again.
 */
const FORMULA_START = /^[=+\-@\t\r']/;
const NEUTRALIZED = /^'[=+\-@\t\r']/;

/**
 * A value as a CSV cell: lists and objects as JSON, null as an empty cell. Text that a
 * spreadsheet would run as a formula is neutralized unless `keepFormulas`.
 */
export function toCell(field: FieldModel, value: unknown, keepFormulas = false): string {
  if (value === null || value === undefined) return '';
  if (STRUCTURED.has(field.type) || typeof value === 'object') return JSON.stringify(value);
  const text = String(value);
  return !keepFormulas && typeof value === 'string' && FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * A CSV cell back into the field's type; an empty cell is no value. What does not read as the
 * type is left as text, for the entity's validator to name. A cell an export neutralized (a
 * leading apostrophe before `=`, `+`, `-`, `@`, tab, carriage return or another apostrophe)
 * loses that one apostrophe.
 */
export function fromCell(field: FieldModel | undefined, given: string): unknown {
  if (given === '') return undefined;
  // The apostrophe an export put before a formula-like text is taken away again.
  const cell = NEUTRALIZED.test(given) ? given.slice(1) : given;
  if (!field) return cell;
  // A localized field's locales travel as one JSON object keyed by locale; a plain cell is one value.
  if (field.localized && cell.startsWith('{')) {
    try {
      return JSON.parse(cell);
    } catch {
      return cell;
    }
  }
  switch (field.type) {
    case 'int':
    case 'float':
      return /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(cell.trim()) ? Number(cell) : cell;
    case 'boolean':
      return cell === 'true' ? true : cell === 'false' ? false : cell;
    case 'array':
    case 'object':
    case 'any':
      try {
        return JSON.parse(cell);
      } catch {
        return cell;
      }
    default:
      return cell;
  }
}
