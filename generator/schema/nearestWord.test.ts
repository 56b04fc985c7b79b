import { describe, expect, it } from 'vitest';
import { nearestWord } from './nearestWord.js';

const TYPES = ['string', 'int', 'float', 'boolean', 'enum', 'objectId', 'isoDate', 'array', 'object', 'url', 'any'];
const OPTIONS = ['type', 'label', 'required', 'unique', 'default', 'min', 'max', 'minLength', 'maxLength', 'readOnly'];

describe('the word meant', () => {
  it('finds a typo or two away, a swap, a case slip and a longer spelling', () => {
    expect(nearestWord('enun', TYPES)).toBe('enum');
    expect(nearestWord('requird', OPTIONS)).toBe('required');
    expect(nearestWord('reqiured', OPTIONS)).toBe('required');
    expect(nearestWord('readonly', OPTIONS)).toBe('readOnly');
    expect(nearestWord('integer', TYPES)).toBe('int');
    expect(nearestWord('maxlenght', OPTIONS)).toBe('maxLength');
    expect(nearestWord('strng', TYPES)).toBe('string');
  });

  it('suggests nothing for a word far from every allowed one', () => {
    expect(nearestWord('colour', TYPES)).toBeUndefined();
    expect(nearestWord('x', OPTIONS)).toBeUndefined();
    expect(nearestWord('permissions', OPTIONS)).toBeUndefined();
  });
});
