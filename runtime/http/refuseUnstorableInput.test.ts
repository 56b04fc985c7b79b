import { describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, unstorableInput } from './refuseUnstorableInput.js';

const nested = (depth: number, leaf: unknown = 1) => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? { a: value } : [value];
  return value;
};

describe('unstorableInput', () => {
  it('passes ordinary bodies, empty ones and nesting up to the limit', () => {
    expect(unstorableInput(undefined)).toBeUndefined();
    expect(unstorableInput({ title: 'x', tags: ['a'], meta: { k: [1, { v: null }] } })).toBeUndefined();
    expect(unstorableInput({ meta: nested(MAX_BODY_DEPTH - 1) })).toBeUndefined();
  });

  it('names the top-level field that holds a NUL character, in a value or a key, at any depth', () => {
    expect(unstorableInput({ title: 'a\u0000b' })?.details).toEqual({
      title: 'must not contain the NUL character (U+0000)',
    });
    expect(unstorableInput({ meta: { deep: [{ 'k\u0000': 1 }] } })?.details).toEqual({
      meta: 'must not contain the NUL character (U+0000)',
    });
    expect(unstorableInput({ 'bad\u0000key': 1 })?.details).toEqual({
      body: 'must not contain the NUL character (U+0000)',
    });
    expect(unstorableInput('\u0000')?.status).toBe(400);
  });

  it('refuses nesting past the limit without recursing, however deep', () => {
    expect(unstorableInput({ meta: nested(MAX_BODY_DEPTH) })?.details).toEqual({
      meta: `is nested deeper than ${MAX_BODY_DEPTH} levels`,
    });
    expect(unstorableInput({ extra: nested(1_000_000) })?.code).toBe('VALIDATION_ERROR');
  });
});

describe('unstorableInput and lone surrogates', () => {
  it('refuses a lone surrogate in a value or key and keeps paired ones (emoji)', () => {
    expect(unstorableInput({ title: 'a\ud800' })?.details).toEqual({
      title: 'must be well-formed Unicode (it holds a lone surrogate)',
    });
    expect(unstorableInput({ options: ['\udc00x'] })?.details).toEqual({
      options: 'must be well-formed Unicode (it holds a lone surrogate)',
    });
    expect(unstorableInput({ meta: { '\ud83d': 1 } })?.details).toEqual({
      meta: 'must be well-formed Unicode (it holds a lone surrogate)',
    });
    expect(unstorableInput({ title: 'smile \ud83d\ude00' })).toBeUndefined();
  });
});
