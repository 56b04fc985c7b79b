import type { FieldMeta } from '../model.js';

/** A field's value as text for a table cell, a record view or a CSV cell. */
export function formatValue(field: FieldMeta | undefined, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (field?.type === 'encryptedKey') return typeof value === 'string' ? value : '••••';
  if (field?.values && typeof value === 'string') return field.values.find((v) => v.key === value)?.label ?? value;
  if (Array.isArray(value)) return value.map((item) => formatValue(field?.values ? field : undefined, item)).join(', ');
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (field?.type === 'isoDate' && typeof value === 'string') {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
