import { describe, expect, it } from 'vitest';
import { collationKey, foldText, MAX_SORT_KEY_LENGTH, naturalSortKey } from './sortKey.js';

const sortBy = (values: string[], key: (v: string) => string) =>
  [...values].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

describe('naturalSortKey', () => {
  it('orders case-insensitively with natural numbers and ignores accents', () => {
    expect(sortBy(['item 10', 'Banana', 'item 2', 'apple', 'Éclair', 'eclairs', 'item 1'], naturalSortKey)).toEqual([
      'apple',
      'Banana',
      'Éclair',
      'eclairs',
      'item 1',
      'item 2',
      'item 10',
    ]);
  });

  it('treats leading zeros as the same number', () => {
    expect(naturalSortKey('v007')).toBe(naturalSortKey('v7'));
  });
});

describe('foldText', () => {
  it('lowers ASCII text and strips accents, precomposed or combining, from the rest', () => {
    expect(foldText('Plain ASCII, 42 {x}\t~')).toBe('plain ascii, 42 {x}\t~');
    expect(foldText('Crème Brûlée')).toBe('creme brulee');
    expect(foldText('Cre\u0300me')).toBe('creme');
    expect(foldText('Straße Ωmega 日本')).toBe('straße ωmega 日本');
  });
});

describe('collationKey', () => {
  it('strength 1 ignores case and accents, 3 puts lower case first', () => {
    expect(collationKey('Résumé', { locale: 'en', strength: 1 })).toBe(
      collationKey('resume', { locale: 'en', strength: 1 }),
    );
    expect(sortBy(['B', 'a', 'A', 'b'], (v) => collationKey(v, { locale: 'en', strength: 3 }))).toEqual([
      'a',
      'A',
      'b',
      'B',
    ]);
  });

  it('orders numbers as text unless numericOrdering is set', () => {
    expect(sortBy(['x10', 'x9'], (v) => collationKey(v, { locale: 'en' }))).toEqual(['x10', 'x9']);
    expect(sortBy(['x10', 'x9'], (v) => collationKey(v, { locale: 'en', numericOrdering: true }))).toEqual([
      'x9',
      'x10',
    ]);
  });
});

describe('naturalSortKey bound', () => {
  it('keeps at most MAX_SORT_KEY_LENGTH characters, so any index can hold it, and agrees with the full key that far', () => {
    const long = `Item 7 ${'Zebra '.repeat(100_000)}`;
    const key = naturalSortKey(long);
    expect(key).toHaveLength(MAX_SORT_KEY_LENGTH);
    expect(key.startsWith('item 017 zebra zebra')).toBe(true);
    expect(naturalSortKey('Short')).toBe('short');
  });
});
