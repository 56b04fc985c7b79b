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

/** A value as a CSV cell: lists and objects as JSON, null as an empty cell. */
export function toCell(field: FieldModel, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (STRUCTURED.has(field.type) || typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A CSV cell back into the field's type; an empty cell is no value. What does not read as the
 * type is left as text, for the entity's validator to name.
 */
export function fromCell(field: FieldModel | undefined, cell: string): unknown {
  if (cell === '') return undefined;
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
