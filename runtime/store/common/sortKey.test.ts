import { describe, expect, it } from 'vitest';
import { collationKey, foldText, MAX_SORT_KEY_LENGTH, naturalSortKey, padNumbers } from './sortKey.js';

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

describe('padNumbers', () => {
  // What keys already stored were made with: the loop must answer exactly as this did.
  const byReplace = (text: string) =>
    text.replace(/\d+/g, (digits) => {
      const trimmed = digits.replace(/^0+(?=\d)/, '');
      if (trimmed.length > 99) return digits;
      return `${String(trimmed.length).padStart(2, '0')}${trimmed}`;
    });

  it('prefixes each digit run with its length, leading zeros dropped, as stored keys have it', () => {
    expect(padNumbers('item 7')).toBe('item 017');
    expect(padNumbers('v007 and 0 and 000')).toBe('v017 and 010 and 010');
    expect(padNumbers('6740a1b2c3d4e5f6a7b8c9d0')).toBe(byReplace('6740a1b2c3d4e5f6a7b8c9d0'));
    expect(padNumbers('no digits')).toBe('no digits');
    expect(padNumbers('')).toBe('');
    expect(padNumbers(`x${'9'.repeat(100)}y`)).toBe(`x${'9'.repeat(100)}y`);
    expect(padNumbers(`${'0'.repeat(5)}${'1'.repeat(99)}`)).toBe(`99${'1'.repeat(99)}`);
  });

  it('answers as the replace it stands for on any mix of digits, letters and other characters', () => {
    const alphabet = ['0', '0', '1', '5', '9', 'a', 'Z', ' ', '-', 'é', '٣', '\u{1F600}'];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 2000; i++) {
      const text = Array.from(
        { length: Math.floor(random() * 30) },
        () => alphabet[Math.floor(random() * alphabet.length)],
      ).join('');
      expect(padNumbers(text)).toBe(byReplace(text));
    }
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
