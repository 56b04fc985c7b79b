import { describe, expect, it } from 'vitest';
import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import { presentJson } from './presentJson.js';

const names = { hidden: new Set(['passwordHash', 'cost']), encrypted: new Set(['apiSecret']) };

describe('a json answer as it goes out', () => {
  it('leaves out masked names and masks encrypted values on every object, however deep', () => {
    const answer = {
      total: 2,
      items: [
        { id: 'a', cost: 3, apiSecret: 'cipher', nested: { passwordHash: 'h', name: 'x' } },
        { id: 'b', apiSecret: null },
      ],
    };
    expect(presentJson(answer, names)).toEqual({
      total: 2,
      items: [
        { id: 'a', apiSecret: ENCRYPTED_PLACEHOLDER, nested: { name: 'x' } },
        { id: 'b', apiSecret: null },
      ],
    });
    // A copy: what the handler returned is unchanged.
    expect(answer.items[0]?.cost).toBe(3);
  });

  it('lets through, as they are, the records the handler already showed', () => {
    const shown = { id: 'a', cost: 3 };
    const presented = new WeakSet<object>([shown]);
    const out = presentJson({ items: [shown, { id: 'b', cost: 4 }] }, names, presented) as {
      items: Record<string, unknown>[];
    };
    expect(out.items[0]).toEqual({ id: 'a', cost: 3 });
    expect(out.items[1]).toEqual({ id: 'b' });
    // A copy of a shown record with more in it is masked again.
    expect(presentJson({ ...shown, extra: 1 }, names, presented)).toEqual({ id: 'a', extra: 1 });
  });

  it('cuts what is deeper than any answer means to be', () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 100; i++) deep = { next: deep };
    let depth = 0;
    for (let at = presentJson(deep, names) as Record<string, unknown> | null; at; depth++)
      at = at.next as Record<string, unknown> | null;
    expect(depth).toBe(64);
  });
});
