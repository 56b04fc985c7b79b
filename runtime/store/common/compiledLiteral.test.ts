import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { compileLiteral, holdsAll, literalIfPlain, nullFilled, plainNames } from './compiledLiteral.js';

setFlagsFromString('--allow-natives-syntax');
const fast = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;
const names = Array.from({ length: 30 }, (_, i) => `field${i}`);

describe('compiled literals', () => {
  it('build objects with fast properties, in the order of the names', () => {
    const build = compileLiteral<unknown[], Record<string, unknown>>(names, (_, i) => `twice(source[${i}])`, {
      twice: (n: number) => n * 2,
    });
    const built = build(names.map((_, i) => i));
    expect(Object.keys(built)).toEqual(names);
    expect(built.field29).toBe(58);
    expect(fast(built)).toBe(true);
  });

  it('fill what a document lacks with null, and keep nothing else', () => {
    const fill = nullFilled(['id', 'title', 'note']);
    expect(fill({ title: 'T', id: 'a', extra: 1, note: undefined })).toEqual({ id: 'a', title: 'T', note: null });
    // Names that cannot be compiled take the loop, with the same answer.
    expect(nullFilled(['a-b', 'c'])({ 'a-b': 1 })).toEqual({ 'a-b': 1, c: null });
  });

  it('refuse names that are not plain identifiers, which are never written as code', () => {
    expect(plainNames(['id', '_sk_title', '$x'])).toBe(true);
    for (const odd of ['__proto__', 'a-b', '1a', 'a b', "a'b", 'a"]}); process.exit(1); ({"'])
      expect(plainNames([odd]), odd).toBe(false);
    expect(() => compileLiteral(['a"b'], () => '1')).toThrow(/not plain/);
    expect(literalIfPlain(['a"b'], () => '1')).toBeUndefined();
    expect(literalIfPlain<unknown, { a: number }>(['a'], () => '1')?.(null)).toEqual({ a: 1 });
    expect(holdsAll({ a: 1, b: undefined }, ['a', 'b'])).toBe(true);
    expect(holdsAll({ a: 1 }, ['a', 'b'])).toBe(false);
  });
});
