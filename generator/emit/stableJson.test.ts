import { describe, expect, it } from 'vitest';
import { stableJson } from './stableJson.js';

describe('stableJson', () => {
  it('sorts keys at every depth, keeps array order, drops undefined', () => {
    expect(stableJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{\n  "a": {\n    "d": [\n      3,\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
    );
  });
});
