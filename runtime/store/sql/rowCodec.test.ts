import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { conformanceModel } from '../../../test/conformance/storeConformance.js';
import { tableLayout } from '../common/tableLayout.js';
import { decodeRow, decodeValue, decodeValues, rowShape } from './rowCodec.js';

setFlagsFromString('--allow-natives-syntax');
const fast = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;

describe('decodeValues', () => {
  const layout = tableLayout(conformanceModel.entities.find((e) => e.plural === 'things')!);
  const whole = rowShape(layout);
  const sample = (kind: string, i: number): unknown =>
    ({ json: '{"a":[1,2]}', bool: i % 2, int: BigInt(i), real: i + 0.5, text: `t${i}` })[kind];

  it('decodes a whole row as a field-by-field loop would, into an object with fast properties', () => {
    const values = whole.kinds.map((kind, i) => sample(kind, i));
    const expected = Object.fromEntries(
      whole.fields.map((field, i) => [field, decodeValue(whole.kinds[i], values[i])]),
    );
    const decoded = decodeValues(whole, values);
    expect(decoded).toEqual(expected);
    expect(Object.keys(decoded)).toEqual(whole.fields);
    expect(fast(decoded)).toBe(true);
    // Nulls stay null, and a selected subset of columns decodes the same way.
    expect(
      Object.values(
        decodeValues(
          whole,
          whole.kinds.map(() => null),
        ),
      ).every((v) => v === null),
    ).toBe(true);
    const picked = rowShape(layout, [whole.fields[1], whole.fields[0]]);
    expect(decodeValues(picked, [values[1], values[0]])).toEqual({
      [whole.fields[1]]: expected[whole.fields[1]],
      [whole.fields[0]]: expected[whole.fields[0]],
    });
  });

  it('decodes a row read as an object the same way, every field present', () => {
    const values = whole.kinds.map((kind, i) => sample(kind, i));
    const row = Object.fromEntries(whole.fields.map((field, i) => [field, values[i]]));
    const decoded = decodeRow(layout, { ...row, [whole.fields[0]]: undefined, extra: 1 });
    expect(decoded).toEqual({ ...decodeValues(whole, values), [whole.fields[0]]: null });
    expect(Object.keys(decoded)).toEqual(whole.fields);
    expect(fast(decoded)).toBe(true);
  });

  it('keeps the loop for names that are not plain identifiers', () => {
    const odd = { fields: ['__proto__', 'a-b'], kinds: ['text', 'text'] as const };
    const decoded = decodeValues(odd, ['x', 'y']);
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(decoded).toEqual({ 'a-b': 'y' });
  });
});
