import { ObjectId } from 'bson';
import { describe, expect, it } from 'vitest';
import { newObjectId } from './objectId.js';

describe('newObjectId', () => {
  it('makes ObjectId-shaped ids with the creation second in front', () => {
    const id = newObjectId(Date.UTC(2026, 10, 27, 8, 0, 0, 999));
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(ObjectId.isValid(id)).toBe(true);
    expect(new ObjectId(id).getTimestamp().toISOString()).toBe('2026-11-27T08:00:00.000Z');
  });

  it('makes ids that differ and grow within a process, also across the counter wrapping', () => {
    const ids = Array.from({ length: 0x1000001 / 64 }, () => newObjectId(1_800_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    const second = Array.from({ length: 1000 }, () => newObjectId(1_800_000_001_000));
    expect(second.every((id) => id > ids.at(-1)!)).toBe(true);
    for (let i = 1; i < second.length; i++)
      if (second[i].slice(18) !== '000000') expect(second[i] > second[i - 1]).toBe(true);
  });
});
