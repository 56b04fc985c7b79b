import { describe, expect, it } from 'vitest';
import type { Caller } from '../context/caller.js';
import type { EntityModel } from '../model/types.js';
import { applyDefaults, copyValues, resolveMacros } from './prepareWrite.js';

const entity = {
  fields: [
    { name: 'views', type: 'int', default: 0 },
    { name: 'tags', type: 'array', default: [] },
    { name: 'meta', type: 'object', default: {} },
    { name: 'limits', type: 'object', default: { daily: 5, kinds: ['a'] } },
    { name: 'title', type: 'string' },
  ],
} as unknown as EntityModel;

describe('applyDefaults', () => {
  it('fills missing fields with copies of their defaults, never the declared values themselves', () => {
    const first = applyDefaults(entity, { title: 'A' });
    expect(first).toEqual({ title: 'A', views: 0, tags: [], meta: {}, limits: { daily: 5, kinds: ['a'] } });
    (first.tags as string[]).push('changed');
    (first.meta as Record<string, unknown>).x = 1;
    ((first.limits as { kinds: string[] }).kinds as string[]).push('b');
    expect(applyDefaults(entity, {})).toEqual({ views: 0, tags: [], meta: {}, limits: { daily: 5, kinds: ['a'] } });
  });

  it('keeps the values the body gives, and leaves the body untouched', () => {
    const body = { title: 'B', views: 7, tags: ['x'] };
    expect(applyDefaults(entity, body)).toEqual({
      title: 'B',
      views: 7,
      tags: ['x'],
      meta: {},
      limits: { daily: 5, kinds: ['a'] },
    });
    expect(body).toEqual({ title: 'B', views: 7, tags: ['x'] });
  });
});

describe('resolveMacros', () => {
  const caller = { user: { id: 'u1', displayName: 'Ada', email: 'ada@example.test' } } as unknown as Caller;
  const now = new Date('2026-01-02T03:04:05.000Z');

  it('replaces the macros in nested strings, leaves other braces, and answers a copy', () => {
    const values = {
      owner: '{{user.id}}',
      note: 'by {{ user.name }} <{{user.email}}> at {{now}}, not {{user.role}}',
      list: ['{{user.id}}', 3, null],
      nested: { when: '{{now}}', flag: true },
    };
    const resolved = resolveMacros(values, caller, now);
    expect(resolved).toEqual({
      owner: 'u1',
      note: 'by Ada <ada@example.test> at 2026-01-02T03:04:05.000Z, not {{user.role}}',
      list: ['u1', 3, null],
      nested: { when: '2026-01-02T03:04:05.000Z', flag: true },
    });
    expect(resolved.list).not.toBe(values.list);
    expect(resolved.nested).not.toBe(values.nested);
    expect(values.owner).toBe('{{user.id}}');
  });

  it('leaves a macro about a missing user as written, and keeps a __proto__ key an own property', () => {
    const values = JSON.parse('{"owner":"{{user.id}}","__proto__":{"polluted":true}}');
    const resolved = resolveMacros(values, { user: undefined } as unknown as Caller, now);
    expect(resolved.owner).toBe('{{user.id}}');
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(Object.keys(resolved)).toEqual(['owner', '__proto__']);
    expect((resolved as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

describe('copyValues', () => {
  it('copies own fields, and keeps a __proto__ key an own property rather than the prototype', () => {
    const plain = { a: 1, b: [2] };
    const copy = copyValues(plain);
    expect(copy).toEqual(plain);
    expect(copy).not.toBe(plain);
    const hostile = JSON.parse('{"a":1,"__proto__":{"views":5}}');
    const kept = copyValues(hostile) as Record<string, unknown>;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(kept.views).toBeUndefined();
    expect(Object.keys(kept)).toEqual(['a', '__proto__']);
  });

  it('keeps defaults from being hidden behind a __proto__ key', () => {
    const hostile = JSON.parse('{"title":"T","__proto__":{"views":5}}');
    expect(applyDefaults(entity, hostile).views).toBe(0);
  });
});
