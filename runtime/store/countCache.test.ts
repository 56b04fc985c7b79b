import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conformanceModel } from '../../test/conformance/storeConformance.js';
import { newId } from '../entities/prepareWrite.js';
import { CountCache, CountCachingStore, MAX_CACHED_AGGREGATES, MAX_REMEMBERED_GROUPS } from './countCache.js';
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

  it('answers a repeated aggregation from memory until a collection it read is written', async () => {
    const { store, cache } = await open();
    const byKind = {
      groupBy: [{ field: 'kind' }],
      timeZone: 'UTC',
      measures: [],
      sort: [],
      limit: 100,
      skip: 0,
    };
    const counts = async (query = byKind) =>
      (await store.aggregate('things', query)).groups.map((g) => [g.key.kind, g.count]);
    await store.insert('things', thing('a'));
    expect(await counts()).toEqual([['a', 1]]);
    expect(await counts()).toEqual([['a', 1]]);
    expect(cache.hits).toBe(1);
    // A write elsewhere keeps it; a write to the collection, or a commit of a transaction that wrote it, does not.
    await store.insert('happenings', { ...thing('a'), place: 'x' });
    expect(await counts()).toEqual([['a', 1]]);
    expect(cache.hits).toBe(2);
    await store.insert('things', thing('b'));
    expect(await counts()).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    await store.transaction(async (tx) => {
      await tx.insert('things', thing('b'));
      // Inside the transaction, its own write shows: the store answers.
      expect((await tx.aggregate('things', byKind)).groups.map((g) => g.count)).toEqual([1, 2]);
    });
    expect(await counts()).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    // Another question (a narrower where, as another caller's access constraint gives) is its own entry.
    expect(await counts({ ...byKind, where: ofKind('a').where } as typeof byKind)).toEqual([['a', 1]]);

    // Through a reference: kept until the referenced collection is written too.
    const a = thing('a');
    await store.insert('things', a);
    await store.insert('remarks', { ...thing('x'), label: 'r', thing: a.id });
    const throughKindA = {
      ...byKind,
      groupBy: [{ field: 'label' }],
      where: {
        through: { field: 'thing', collection: 'things', where: { field: 'kind', op: 'eq' as const, value: 'a' } },
      },
    };
    const labels = async () => (await store.aggregate('remarks', throughKindA)).groups.map((g) => g.count);
    expect(await labels()).toEqual([1]);
    const hits = cache.hits;
    expect(await labels()).toEqual([1]);
    expect(cache.hits).toBeGreaterThan(hits);
    await store.update('things', a.id, { kind: 'b' });
    expect(await labels()).toEqual([]);
    await store.close();
  });

  it('keeps at most its bounds of aggregations and of their groups', async () => {
    const cache = new CountCache();
    let loads = 0;
    const result = (groups: number) => async () => {
      loads++;
      return {
        groups: Array.from({ length: groups }, (_, i) => ({ key: { i }, count: 1, values: {} })),
        totalGroups: groups,
      };
    };
    for (let i = 0; i <= MAX_CACHED_AGGREGATES; i++) await cache.rememberAggregate(`q${i}`, ['things'], result(1));
    expect(loads).toBe(MAX_CACHED_AGGREGATES + 1);
    // The least recently used went first.
    await cache.rememberAggregate(`q${MAX_CACHED_AGGREGATES}`, ['things'], result(1));
    await cache.rememberAggregate('q0', ['things'], result(1));
    expect(loads).toBe(MAX_CACHED_AGGREGATES + 2);
    // One answer with more groups than the bound is never kept; large ones push the others out.
    await cache.rememberAggregate('huge', ['things'], result(MAX_REMEMBERED_GROUPS + 1));
    await cache.rememberAggregate('huge', ['things'], result(MAX_REMEMBERED_GROUPS + 1));
    expect(loads).toBe(MAX_CACHED_AGGREGATES + 4);
    await cache.rememberAggregate('large', ['things'], result(MAX_REMEMBERED_GROUPS));
    await cache.rememberAggregate('q1', ['things'], result(1));
    expect(loads).toBe(MAX_CACHED_AGGREGATES + 6);
  });
});
