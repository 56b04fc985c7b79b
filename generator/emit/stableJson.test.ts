import { describe, expect, it } from 'vitest';
import { stableJson } from './stableJson.js';

describe('stableJson', () => {
  it('sorts keys at every depth, keeps array order, drops undefined', () => {
    expect(stableJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{\n  "a": {\n    "d": [\n      3,\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
    );
  });

  it('writes the same bytes whatever order the keys were added in', () => {
    const shuffled = (n: number) => {
      const keys = Array.from({ length: n }, (_, i) => `k${(i * 7) % n}`);
      return Object.fromEntries(keys.map((k) => [k, { z: k, a: [k, { y: 1, b: 2 }] }]));
    };
    const ordered = Object.fromEntries(
      Object.entries(shuffled(30))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k]) => [k, { a: [k, { b: 2, y: 1 }], z: k }]),
    );
    expect(stableJson(shuffled(30))).toBe(`${JSON.stringify(ordered, null, 2)}\n`);
  });

  it('leaves the value it was given as it was', () => {
    const value = { b: { d: 1, c: 2 }, a: 1 };
    stableJson(value);
    expect(Object.keys(value)).toEqual(['b', 'a']);
    expect(Object.keys(value.b)).toEqual(['d', 'c']);
  });
});
