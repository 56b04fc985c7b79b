import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conformanceModel } from '../../test/conformance/storeConformance.js';
import { newId } from '../entities/prepareWrite.js';
import { CountCache, CountCachingStore } from './countCache.js';
import { SqliteStore } from './sqlite/sqliteStore.js';

const thing = (kind: string) => ({
  id: newId(),
  ownerId: '0'.repeat(24),
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
  name: 'n',
  kind,
});
const ofKind = (kind: string) => ({ where: { field: 'kind', op: 'eq' as const, value: kind } });

async function open(path = ':memory:') {
  const inner = SqliteStore.open(path);
  await inner.init(conformanceModel);
  const cache = new CountCache();
  return { inner, cache, store: new CountCachingStore(inner, cache) };
}

describe('count cache', () => {
  it('answers a repeated count from memory until the next write to that collection', async () => {
    const { store, cache } = await open();
    await store.insert('things', thing('a'));
    expect(await store.count('things', ofKind('a'))).toBe(1);
    expect(await store.count('things', ofKind('a'))).toBe(1);
    expect(cache.hits).toBe(1);
    // Another query, another entry; a write elsewhere leaves this one.
    expect(await store.count('things', ofKind('b'))).toBe(0);
    await store.insert('happenings', { ...thing('a'), place: 'x' });
    expect(await store.count('things', ofKind('a'))).toBe(1);
    expect(cache.hits).toBe(2);
    await store.insert('things', thing('a'));
    expect(await store.count('things', ofKind('a'))).toBe(2);
    const doc = await store.insert('things', thing('b'));
    expect(await store.count('things', ofKind('b'))).toBe(1);
    await store.update('things', doc.id, { kind: 'a' });
    expect(await store.count('things', ofKind('a'))).toBe(3);
    await store.remove('things', doc.id);
    expect(await store.count('things', ofKind('a'))).toBe(2);
    await store.close();
  });

  it('counts inside a transaction from the store, and forgets the written collections when it ends', async () => {
    const { store } = await open();
    expect(await store.count('things', {})).toBe(0);
    await store.transaction(async (tx) => {
      await tx.insert('things', thing('a'));
      expect(await tx.count('things', {})).toBe(1);
    });
    expect(await store.count('things', {})).toBe(1);
    await expect(
      store.transaction(async (tx) => {
        await tx.insert('things', thing('a'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await store.count('things', {})).toBe(1);
    await store.close();
  });

  it('never keeps a count that raced a write', async () => {
    const cache = new CountCache();
    const generation = cache.generation('things');
    cache.invalidate('things');
    cache.set('k', 'things', generation, 5);
    expect(cache.get('k', 'things')).toBeUndefined();
  });

  it('forgets everything when another connection wrote to the same SQLite file', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'entigen-counts-')), 'c.db');
    const { store, inner } = await open(path);
    const other = SqliteStore.open(path);
    await other.init(conformanceModel);
    expect(await store.count('things', {})).toBe(0);
    await other.insert('things', thing('a'));
    expect(await store.count('things', {})).toBe(1);
    await other.close();
    await inner.close();
  });

  it('keeps at most its bound of entries, the least recently used leaving first', () => {
    const cache = new CountCache(2);
    cache.set('a', 't', 0, 1);
    cache.set('b', 't', 0, 2);
    expect(cache.get('a', 't')).toBe(1);
    cache.set('c', 't', 0, 3);
    expect(cache.get('b', 't')).toBeUndefined();
    expect(cache.get('a', 't')).toBe(1);
    expect(cache.size).toBe(2);
  });

  it('tells other instances what was written, and hears them', async () => {
    const { store, cache } = await open();
    const told: string[] = [];
    cache.onInvalidate = (collection) => told.push(collection);
    await store.insert('things', thing('a'));
    expect(told).toEqual(['things']);
    expect(await store.count('things', {})).toBe(1);
    cache.invalidate('things', true);
    expect(told).toEqual(['things']);
    expect(await store.count('things', {})).toBe(1);
    expect(cache.misses).toBe(2);
    await store.close();
  });

  it('remembers a read over several collections until any of them is written, here or in another process', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'entigen-remember-')), 'r.db');
    const { store, inner, cache } = await open(path);
    let loads = 0;
    const read = () => cache.remember('k', ['things', 'happenings'], async () => ++loads);
    expect(await read()).toBe(1);
    expect(await read()).toBe(1);
    await store.insert('happenings', { ...thing('a'), place: 'x' });
    expect(await read()).toBe(2);
    // A write to a collection it did not read leaves it.
    expect(await cache.remember('h', ['happenings'], async () => 'kept')).toBe('kept');
    await store.insert('things', thing('a'));
    expect(await cache.remember('h', ['happenings'], async () => 'reloaded')).toBe('kept');
    expect(await read()).toBe(3);
    const other = SqliteStore.open(path);
    await other.init(conformanceModel);
    await other.insert('things', thing('b'));
    expect(await read()).toBe(4);
    // A load that raced a write is answered but not kept.
    const raced = cache.remember('r', ['things'], async () => {
      cache.invalidate('things');
      return 'stale';
    });
    expect(await raced).toBe('stale');
    expect(await cache.remember('r', ['things'], async () => 'fresh')).toBe('fresh');
    await other.close();
    await inner.close();
  });

  it('keeps a count through a reference until its own or the referenced collection is written', async () => {
    const { store, cache } = await open();
    const a = thing('a');
    await store.insert('things', a);
    const remark = { ...thing('x'), label: 'r', thing: a.id };
    await store.insert('remarks', remark);
    const throughKindA = {
      where: {
        through: { field: 'thing', collection: 'things', where: { field: 'kind', op: 'eq' as const, value: 'a' } },
      },
    };
    expect(await store.count('remarks', throughKindA)).toBe(1);
    expect(await store.count('remarks', throughKindA)).toBe(1);
    expect(cache.hits).toBe(1);
    // The referenced record changes: the remark no longer matches, and the cache knows.
    await store.update('things', a.id, { kind: 'b' });
    expect(await store.count('remarks', throughKindA)).toBe(0);
    await store.update('things', a.id, { kind: 'a' });
    expect(await store.count('remarks', throughKindA)).toBe(1);
    await store.insert('remarks', { ...remark, id: newId() });
    expect(await store.count('remarks', throughKindA)).toBe(2);
    // Lists under the rule use the remembered ids of the referenced records, renewed on a write there.
    const labels = async () => (await store.find('remarks', throughKindA)).length;
    expect(await labels()).toBe(2);
    await store.update('things', a.id, { kind: 'c' });
    expect(await labels()).toBe(0);
    expect(await store.get('remarks', remark.id, throughKindA.where)).toBeNull();
    await store.update('things', a.id, { kind: 'a' });
    expect(await store.get('remarks', remark.id, throughKindA.where)).not.toBeNull();
  });
});
