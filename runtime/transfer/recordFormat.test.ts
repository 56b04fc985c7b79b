import { describe, expect, it } from 'vitest';
import type { FieldModel } from '../model/types.js';
import { fromCell, toCell } from './recordFormat.js';

const field = (type: FieldModel['type'], localized = false): FieldModel => ({
  name: 'f',
  label: 'F',
  type,
  required: false,
  unique: false,
  search: false,
  trackChanges: false,
  hidden: false,
  readOnly: false,
  system: false,
  filterable: false,
  ...(localized ? { localized: { locales: ['en', 'de'], defaultLocale: 'en', required: ['en'] } } : {}),
});

describe('CSV cells', () => {
  it('carry every locale of a localized field as a JSON object, and read it back', () => {
    const rank = field('int', true);
    const cell = toCell(rank, { en: 1, de: 2 });
    expect(cell).toBe('{"en":1,"de":2}');
    expect(fromCell(rank, cell)).toEqual({ en: 1, de: 2 });
    // A plain cell is one value, the default locale's once the import writes it.
    expect(fromCell(rank, '7')).toBe(7);
    expect(fromCell(field('string', true), '{not json')).toBe('{not json');
  });

  it('read numbers, booleans and JSON by the field type, and leave what does not fit as text', () => {
    expect(fromCell(field('float'), '2.5')).toBe(2.5);
    expect(fromCell(field('boolean'), 'true')).toBe(true);
    expect(fromCell(field('int'), 'many')).toBe('many');
    expect(fromCell(field('array'), '[1,2]')).toEqual([1, 2]);
    expect(fromCell(field('string'), '')).toBeUndefined();
  });
});
