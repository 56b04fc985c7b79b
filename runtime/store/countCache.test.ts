import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conformanceModel } from '../../test/conformance/storeConformance.js';
import { newId } from '../write/prepareWrite.js';
import {
  CountCache,
  CountCachingStore,
  MAX_CACHED_AGGREGATES,
  MAX_PAGE_LENGTH,
  MAX_REMEMBERED_GROUPS,
  MAX_REMEMBERED_PAGE_IDS,
  MAX_REMEMBERED_VALUES,
  MAX_REMEMBERED_WEIGHT,
} from './countCache.js';
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

  it('keeps a remembered value in use however many others come and go, and lets the unused ones go first', async () => {
    const cache = new CountCache();
    let loads = 0;
    const load = (value: string) => async () => {
      loads++;
      return value;
    };
    await cache.remember('hot', ['users'], load('hot'));
    await cache.remember('cold', ['users'], load('cold'));
    for (let i = 0; i < 3 * MAX_REMEMBERED_VALUES; i++) {
      await cache.remember(`k${i}`, ['users'], load(`k${i}`));
      expect(await cache.remember('hot', ['users'], load('hot again'))).toBe('hot');
    }
    expect(loads).toBe(2 + 3 * MAX_REMEMBERED_VALUES);
    expect(await cache.remember('cold', ['users'], load('cold again'))).toBe('cold again');
    // The newest keys are all still there.
    const before = loads;
    for (let i = 3 * MAX_REMEMBERED_VALUES - 100; i < 3 * MAX_REMEMBERED_VALUES; i++)
      await cache.remember(`k${i}`, ['users'], load('reloaded'));
    expect(loads).toBe(before);
  });

  it('tells other instances what was written, and hears them', async () => {
    const { store, cache } = await open();
    const told: string[] = [];
    // A write before the bus is there is told once it is.
    await store.insert('happenings', { ...thing('a'), place: 'x' });
    cache.announceTo((collection) => told.push(collection));
    expect(told).toEqual(['happenings']);
    told.length = 0;
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

  it('remembers reads through the store outside transactions only, bounded by the length of what it keeps', async () => {
    const { store, inner } = await open();
    let loads = 0;
    const read = (key: string, value: unknown = 'v') =>
      store.remember(key, ['things'], async () => {
        loads++;
        return value;
      });
    await read('a');
    await read('a');
    expect(loads).toBe(1);
    // Inside a transaction the read may see the transaction's own writes: it is not kept.
    await store.transaction(async (tx) => {
      await tx.remember!('a', ['things'], async () => loads++);
      await tx.remember!('a', ['things'], async () => loads++);
    });
    expect(loads).toBe(3);
    // One list longer than the bound is never kept; lists that fill it push the oldest out.
    const long = Array.from({ length: MAX_REMEMBERED_WEIGHT }, (_, i) => i);
    await read('long', long);
    await read('long', long);
    expect(loads).toBe(5);
    const half = Array.from({ length: MAX_REMEMBERED_WEIGHT / 2 }, (_, i) => i);
    await read('first', half);
    await read('second', half);
    await read('first', half);
    expect(loads).toBe(8);
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

  it('folds what creates add into a remembered aggregation, answering what the store answers', async () => {
    const { store, inner, cache } = await open();
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const record = () => ({
      ...thing(['a', 'b', 'c'][Math.floor(random() * 3)]),
      n: random() < 0.2 ? null : Math.floor(random() * 1000) - 300,
      flag: random() < 0.5,
      name: random() < 0.5 ? 'alpha' : 'beta',
    });
    for (let i = 0; i < 60; i++) await store.insert('things', record());
    const questions = [
      {
        groupBy: [{ field: 'kind' }],
        timeZone: 'UTC',
        measures: [
          { op: 'sum' as const, field: 'n' },
          { op: 'min' as const, field: 'n' },
          { op: 'max' as const, field: 'n' },
        ],
        sort: [],
        limit: 100,
        skip: 0,
        where: {
          and: [
            { field: 'flag', op: 'eq' as const, value: true },
            { field: 'n', op: 'gt' as const, value: -100 },
          ],
        },
      },
      {
        groupBy: [{ field: 'kind' }, { field: 'flag' }],
        timeZone: 'UTC',
        measures: [{ op: 'sum' as const, field: 'n' }],
        sort: [{ column: 'sum.n' as const, direction: 'desc' as const }],
        limit: 100,
        skip: 0,
        where: { field: 'name', op: 'in' as const, value: ['alpha', null] },
      },
    ];
    let folded = 0;
    for (let round = 0; round < 40; round++) {
      for (const query of questions)
        expect(await store.aggregate('things', query)).toEqual(await inner.aggregate('things', query));
      const misses = cache.misses;
      if (round % 5 === 4)
        await store.transaction(async (tx) => {
          await tx.insert('things', record());
          await tx.insertMany('things', [record(), record()]);
        });
      else await store.insert('things', record());
      for (const query of questions)
        expect(await store.aggregate('things', query)).toEqual(await inner.aggregate('things', query));
      if (cache.misses === misses) folded++;
    }
    // Most writes were folded in (a tie in the order by sums, or an added group, reads again).
    expect(folded).toBeGreaterThan(20);
    // Anything but an insert makes the next aggregation read the store.
    const [first] = await inner.find('things', { limit: 1 });
    const misses = cache.misses;
    await store.update('things', first.id, { n: 5 });
    expect(await store.aggregate('things', questions[0])).toEqual(await inner.aggregate('things', questions[0]));
    expect(cache.misses).toBe(misses + 1);
    // A transaction that inserted and then failed folds nothing in.
    await expect(
      store.transaction(async (tx) => {
        await tx.insert('things', { ...record(), kind: 'a', flag: true, n: 1 });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await store.aggregate('things', questions[0])).toEqual(await inner.aggregate('things', questions[0]));
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

  it('remembers a page of a list as its ids until the collection is written, and reads those records again', async () => {
    const { store, inner, cache } = await open();
    for (let i = 0; i < 5; i++) await store.insert('things', { ...thing(i % 2 ? 'a' : 'b'), name: `n${i}` });
    const reads: string[] = [];
    const find = inner.find.bind(inner);
    inner.find = async (collection, query) => {
      reads.push(JSON.stringify(query.where));
      return find(collection, query);
    };
    const page = { ...ofKind('a'), sort: [{ field: 'name', direction: 'desc' as const }], limit: 10, remember: true };
    const first = await store.find('things', page);
    expect(first.map((doc) => doc.name)).toEqual(['n3', 'n1']);
    const again = await store.find('things', page);
    expect(again).toEqual(first);
    // The second read asked for the records by id, not for the list.
    expect(reads).toHaveLength(2);
    expect(JSON.parse(reads[1])).toEqual({ field: 'id', op: 'in', value: first.map((doc) => doc.id) });
    expect(cache.hits).toBe(1);
    // A write elsewhere keeps the page; a write to the collection, even to a record not on it, does not.
    await store.insert('happenings', { ...thing('a'), place: 'x' });
    expect((await store.find('things', page)).map((doc) => doc.name)).toEqual(['n3', 'n1']);
    expect(cache.hits).toBe(2);
    await store.insert('things', { ...thing('a'), name: 'n9' });
    expect((await store.find('things', page)).map((doc) => doc.name)).toEqual(['n9', 'n3', 'n1']);
    await store.update('things', first[0].id, { name: 'n0' });
    expect((await store.find('things', page)).map((doc) => doc.name)).toEqual(['n9', 'n1', 'n0']);
    // Inside a transaction, and for long reads, the store answers every time.
    const { hits } = cache;
    await store.transaction(async (tx) => {
      await tx.find('things', page);
      await tx.find('things', page);
    });
    const before = reads.length;
    await store.find('things', { ...page, limit: MAX_PAGE_LENGTH + 1 });
    await store.find('things', { ...page, limit: MAX_PAGE_LENGTH + 1 });
    // Reads that do not ask to be remembered (those that coordinate work) always go to the store.
    await store.find('things', { ...page, remember: false });
    await store.find('things', { ...page, remember: undefined });
    expect(reads.length - before).toBe(4);
    expect(cache.hits).toBe(hits);
    await store.close();
  });

  it('reads a page anew when one of its records is gone without a write it heard of', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'entigen-pages-')), 'p.db');
    const { store, inner, cache } = await open(path);
    const a = await store.insert('things', thing('a'));
    await store.insert('things', thing('a'));
    const page = { ...ofKind('a'), limit: 10, remember: true };
    expect(await store.find('things', page)).toHaveLength(2);
    // Another connection removes a record: SQLite tells, and everything remembered goes.
    const other = SqliteStore.open(path);
    await other.init(conformanceModel);
    await other.remove('things', a.id);
    expect(await store.find('things', page)).toHaveLength(1);
    await other.close();
    // A re-read that finds fewer records than the page held is not answered.
    const b = await store.insert('things', thing('a'));
    expect(await store.find('things', page)).toHaveLength(2);
    await inner.remove('things', b.id);
    const hits = cache.hits;
    expect((await store.find('things', page)).map((doc) => doc.id)).not.toContain(b.id);
    expect(cache.hits).toBe(hits);
    await inner.close();
  });

  it('keeps pages through a reference until the referenced collection is written', async () => {
    const { store } = await open();
    const a = await store.insert('things', thing('a'));
    await store.insert('remarks', { ...thing('x'), label: 'r', thing: a.id });
    const page = {
      where: {
        through: { field: 'thing', collection: 'things', where: { field: 'kind', op: 'eq' as const, value: 'a' } },
      },
      limit: 10,
      remember: true,
    };
    expect(await store.find('remarks', page)).toHaveLength(1);
    expect(await store.find('remarks', page)).toHaveLength(1);
    await store.update('things', a.id, { kind: 'b' });
    expect(await store.find('remarks', page)).toHaveLength(0);
    await store.close();
  });

  it('keeps at most its bound of page ids', async () => {
    const cache = new CountCache();
    let loads = 0;
    const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i) }));
    const load = (n: number) => async () => {
      loads++;
      return ids(n);
    };
    const reread = async (kept: readonly string[]) => kept.map((id) => ({ id }));
    const pages = Math.floor(MAX_REMEMBERED_PAGE_IDS / MAX_PAGE_LENGTH);
    for (let i = 0; i < pages; i++) await cache.rememberPage(`p${i}`, ['things'], load(MAX_PAGE_LENGTH - 1), reread);
    await cache.rememberPage('p0', ['things'], load(MAX_PAGE_LENGTH - 1), reread);
    expect(loads).toBe(pages);
    // One more full page pushes out the least recently used (p1), not the one just read.
    await cache.rememberPage('extra', ['things'], load(MAX_PAGE_LENGTH), reread);
    await cache.rememberPage('p0', ['things'], load(MAX_PAGE_LENGTH - 1), reread);
    expect(loads).toBe(pages + 1);
    await cache.rememberPage('p1', ['things'], load(MAX_PAGE_LENGTH - 1), reread);
    expect(loads).toBe(pages + 2);
  });
});
