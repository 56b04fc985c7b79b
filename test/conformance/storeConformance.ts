import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelFromInputs } from '../../generator/build.js';
import type { AggregateQuery, AggregateResult, DateBucket, Doc, Store, Where } from '../../runtime/store/types.js';
import { UniqueConflict } from '../../runtime/store/types.js';
import { newId } from '../../runtime/write/prepareWrite.js';

/** The entity file of `things`, for tests that vary it. */
export const THINGS_ENTITY = `
version: 1
name: Thing
plural: things
base: owned
fields:
  name: { type: string, required: true, search: true }
  note: { type: string, search: true }
  code: { type: string, unique: true }
  n: { type: int }
  x: { type: float }
  flag: { type: boolean }
  kind: { type: enum, values: [a, b, c] }
  tags: { type: array, items: { type: string } }
  meta: { type: object }
  when: { type: isoDate }
filters: [kind, tags, flag, note]
sortable: [name]
`;

const HAPPENINGS = `
version: 1
name: Happening
plural: happenings
base: owned
fields:
  at: { type: isoDate }
  amount: { type: float }
  place: { type: string }
filters: [place]
`;

/** Records that reference things: one reference, and an array of them. */
const REMARKS = `
version: 1
name: Remark
plural: remarks
base: owned
fields:
  label: { type: string }
  thing: { type: objectId, ref: things }
  about: { type: array, items: { type: objectId, ref: things } }
`;

export const conformanceModel = modelFromInputs({
  entityFiles: [
    { file: 'things.yaml', text: THINGS_ENTITY, origin: 'app' },
    { file: 'happenings.yaml', text: HAPPENINGS, origin: 'app' },
    { file: 'remarks.yaml', text: REMARKS, origin: 'app' },
  ],
});

/** Dates around a daylight-saving change (Berlin: 2024-03-31 01:00 UTC) and the turn of a year. */
export const happeningRows: Record<string, unknown>[] = [
  { at: '2024-03-30T23:30:00.000Z', amount: 0.1, place: 'x' },
  { at: '2024-03-31T22:30:00.000Z', amount: 0.2, place: 'x' },
  { at: '2024-12-31T23:30:00.000Z', amount: 0.3, place: 'y' },
  { at: '2024-01-01T00:00:00.000Z', amount: 0.001, place: 'y' },
  { place: 'Z' },
];

export const conformanceRows: Record<string, unknown>[] = [
  {
    name: 'item 10',
    n: 10,
    x: 1.5,
    flag: true,
    kind: 'a',
    tags: ['red', 'blue'],
    meta: { deep: { v: 1 } },
    when: '2024-03-01T00:00:00.000Z',
    note: 'Café au lait',
  },
  { name: 'Banana', n: 2, x: -1, flag: false, kind: 'b', tags: ['blue'], note: 'yellow fruit' },
  { name: 'item 2', n: 2, flag: true, kind: 'c', tags: [], note: null },
  { name: 'apple', n: null, x: 0, kind: 'a', tags: ['green'], note: 'red fruit' },
  { name: 'Éclair', n: 7, kind: 'b', note: 'pastry cream' },
];

/** Every filter case: the condition and the names it selects, sorted by name. */
export const filterCases: [Where, string[]][] = [
  [{ field: 'kind', op: 'eq', value: 'a' }, ['apple', 'item 10']],
  [{ field: 'kind', op: 'ne', value: 'a' }, ['Banana', 'Éclair', 'item 2']],
  [{ field: 'n', op: 'ne', value: 2 }, ['apple', 'Éclair', 'item 10']],
  [{ field: 'kind', op: 'in', value: ['b', 'c'] }, ['Banana', 'Éclair', 'item 2']],
  [{ field: 'n', op: 'gt', value: 2 }, ['Éclair', 'item 10']],
  [{ field: 'n', op: 'gte', value: 7 }, ['Éclair', 'item 10']],
  [{ field: 'x', op: 'lt', value: 0 }, ['Banana']],
  [{ field: 'x', op: 'lte', value: 0 }, ['apple', 'Banana']],
  [{ field: 'n', op: 'exists', value: false }, ['apple']],
  [{ field: 'note', op: 'exists', value: true }, ['apple', 'Banana', 'Éclair', 'item 10']],
  [{ field: 'n', op: 'eq', value: null }, ['apple']],
  [{ field: 'flag', op: 'eq', value: true }, ['item 2', 'item 10']],
  [{ field: 'tags', op: 'contains', value: 'blue' }, ['Banana', 'item 10']],
  [{ field: 'tags', op: 'contains', value: ['green', 'red'] }, ['apple', 'item 10']],
  [{ field: 'when', op: 'gte', value: '2024-02-01T00:00:00.000Z' }, ['item 10']],
  [
    {
      and: [
        { field: 'kind', op: 'eq', value: 'a' },
        { field: 'n', op: 'exists', value: true },
      ],
    },
    ['item 10'],
  ],
  [
    {
      or: [
        { field: 'kind', op: 'eq', value: 'c' },
        { field: 'x', op: 'lt', value: 0 },
      ],
    },
    ['Banana', 'item 2'],
  ],
  [{ not: { field: 'kind', op: 'in', value: ['a', 'b'] } }, ['item 2']],
  // NOT is true only where its condition is false, never where a null field makes it unknown.
  [{ not: { field: 'n', op: 'eq', value: 2 } }, ['Éclair', 'item 10']],
  [{ not: { field: 'note', op: 'exists', value: true } }, ['item 2']],
  [
    {
      not: {
        or: [
          { field: 'kind', op: 'eq', value: 'a' },
          { field: 'x', op: 'gt', value: 0 },
        ],
      },
    },
    ['Banana'],
  ],
  [{ not: { field: 'tags', op: 'contains', value: 'blue' } }, ['apple', 'Éclair', 'item 2']],
  [{ not: { not: { field: 'n', op: 'lt', value: 7 } } }, ['Banana', 'item 2']],
  // nin, like ne, keeps records without a value, unless null is one of the values.
  [{ field: 'kind', op: 'nin', value: ['a'] }, ['Banana', 'Éclair', 'item 2']],
  [{ field: 'n', op: 'nin', value: [2] }, ['apple', 'Éclair', 'item 10']],
  [{ field: 'n', op: 'nin', value: [2, null] }, ['Éclair', 'item 10']],
  [{ field: 'kind', op: 'nin', value: [] }, ['apple', 'Banana', 'Éclair', 'item 2', 'item 10']],
  [{ not: { field: 'n', op: 'nin', value: [2] } }, ['Banana', 'item 2']],
  // Text tests ignore case and accents; LIKE and regex wildcards are literal.
  [{ field: 'note', op: 'textContains', value: 'CAFE' }, ['item 10']],
  [{ field: 'note', op: 'textContains', value: 'ruit' }, ['apple', 'Banana']],
  [{ field: 'note', op: 'textStartsWith', value: 'Red' }, ['apple']],
  [{ field: 'note', op: 'textStartsWith', value: 'fruit' }, []],
  [{ field: 'note', op: 'textContains', value: '%' }, []],
  [{ field: 'note', op: 'textContains', value: '.*' }, []],
  [{ field: 'note', op: 'textContains', value: 'u_t' }, []],
  [{ not: { field: 'note', op: 'textContains', value: 'fruit' } }, ['Éclair', 'item 10']],
  [{ field: 'name', op: 'textStartsWith', value: 'ITEM' }, ['item 2', 'item 10']],
  [{ and: [] }, ['apple', 'Banana', 'Éclair', 'item 2', 'item 10']],
  [{ or: [] }, []],
  [{ field: 'kind', op: 'in', value: [] }, []],
].map(([where, names]) => [where as Where, names as string[]]);

/** A new `things` record named `name`, with `fields` besides, for tests that write a few. */
export function newThing(name: string, fields: Record<string, unknown> = {}): Doc {
  return {
    id: newId(),
    ownerId: '0'.repeat(24),
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    name,
    ...fields,
  };
}

/** The same inputs must give the same outputs on every store adapter. */
export function storeConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance: ${name}`, () => {
    let store: Store;
    const docs: Doc[] = [];
    const make = (fields: Record<string, unknown>): Doc =>
      ({
        id: newId(),
        ownerId: '0'.repeat(24),
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
        archivedAt: null,
        ...fields,
      }) as Doc;
    const names = (list: Doc[]) => list.map((d) => d.name);

    beforeAll(async () => {
      store = await open();
      await store.init(conformanceModel);
      for (const row of conformanceRows) docs.push(await store.insert('things', make(row)));
      for (const row of happeningRows) await store.insert('happenings', make(row));
    });
    afterAll(() => store.close());

    it('returns every field, null when unset, arrays and nested objects intact', async () => {
      const got = await store.get('things', docs[0].id);
      expect(got).toMatchObject({
        name: 'item 10',
        n: 10,
        x: 1.5,
        flag: true,
        tags: ['red', 'blue'],
        meta: { deep: { v: 1 } },
        code: null,
      });
      expect((await store.get('things', docs[4].id))!.tags).toBeNull();
      expect(await store.get('things', newId())).toBeNull();
    });

    it('orders by id descending by default and honours skip and limit', async () => {
      expect(names(await store.find('things', {}))).toEqual(['Éclair', 'apple', 'item 2', 'Banana', 'item 10']);
      expect(names(await store.find('things', { skip: 1, limit: 2 }))).toEqual(['apple', 'item 2']);
    });

    it.each(filterCases)('filters %j', async (where, expected) => {
      const found = await store.find('things', { where: where as never, sort: [{ field: 'name', direction: 'asc' }] });
      expect(names(found)).toEqual(expected);
      expect(await store.count('things', { where: where as never })).toBe(expected.length);
    });

    it('matches through a reference: the referenced record (any, for an array) meets the inner condition', async () => {
      const [item10, banana, , apple] = docs;
      const remark = async (label: string, fields: Record<string, unknown>) =>
        store.insert('remarks', make({ label, ...fields }));
      const one = await remark('one', { thing: item10.id, about: [apple.id, banana.id] });
      await remark('two', { thing: banana.id, about: [] });
      await remark('three', {});
      const labels = async (where: Where) =>
        (await store.find('remarks', { where, sort: [{ field: 'label', direction: 'asc' }] })).map((d) => d.label);
      const kindA: Where = { field: 'kind', op: 'eq', value: 'a' };
      const kindB: Where = { field: 'kind', op: 'eq', value: 'b' };
      expect(await labels({ through: { field: 'thing', collection: 'things', where: kindA } })).toEqual(['one']);
      expect(await labels({ through: { field: 'thing', collection: 'things', where: kindB } })).toEqual(['two']);
      expect(await labels({ through: { field: 'thing', collection: 'things' } })).toEqual(['one', 'two']);
      expect(await labels({ through: { field: 'about', collection: 'things', where: kindB } })).toEqual(['one']);
      expect(
        await labels({
          or: [
            { through: { field: 'about', collection: 'things', where: { field: 'kind', op: 'eq', value: 'c' } } },
            { field: 'label', op: 'eq', value: 'three' },
          ],
        }),
      ).toEqual(['three']);
      expect(
        await store.count('remarks', { where: { through: { field: 'thing', collection: 'things', where: kindA } } }),
      ).toBe(1);
      expect(
        await store.get('remarks', one.id, { through: { field: 'thing', collection: 'things', where: kindB } }),
      ).toBeNull();
      expect(
        await store.get('remarks', one.id, { through: { field: 'thing', collection: 'things', where: kindA } }),
      ).not.toBeNull();
      // Ids known already (remembered by the count cache) stand for the inner condition.
      expect(await labels({ through: { field: 'thing', collection: 'things', ids: [item10.id] } })).toEqual(['one']);
      expect(await labels({ through: { field: 'about', collection: 'things', ids: [banana.id] } })).toEqual(['one']);
      expect(await labels({ through: { field: 'thing', collection: 'things', ids: [] } })).toEqual([]);
      // A condition the access layer has not finished matches nothing.
      expect(await labels({ through: { field: 'thing', collection: 'things', viewScopePending: true } })).toEqual([]);
    });

    it('sorts strings case-insensitively with natural numbers, numbers numerically, nulls first ascending', async () => {
      expect(names(await store.find('things', { sort: [{ field: 'name', direction: 'asc' }] }))).toEqual([
        'apple',
        'Banana',
        'Éclair',
        'item 2',
        'item 10',
      ]);
      expect(names(await store.find('things', { sort: [{ field: 'n', direction: 'desc' }] }))).toEqual([
        'item 10',
        'Éclair',
        'item 2',
        'Banana',
        'apple',
      ]);
    });

    it('sorts with an explicit collation', async () => {
      const sorted = await store.find('things', {
        sort: [{ field: 'name', direction: 'asc' }],
        collation: { locale: 'en', strength: 3 },
      });
      expect(names(sorted)).toEqual(['apple', 'Banana', 'Éclair', 'item 10', 'item 2']);
    });

    it('searches every term as a word prefix, ignoring case and accents', async () => {
      expect(names(await store.find('things', { text: 'fruit', sort: [{ field: 'name', direction: 'asc' }] }))).toEqual(
        ['apple', 'Banana'],
      );
      expect(names(await store.find('things', { text: 'CAFE la' }))).toEqual(['item 10']);
      expect(names(await store.find('things', { text: 'ecl' }))).toEqual(['Éclair']);
      expect(await store.count('things', { text: 'fruit yellow' })).toBe(1);
    });

    it('pages by keyset after an id in both directions and selects fields', async () => {
      const all = await store.find('things', {});
      expect(names(await store.find('things', { after: all[1].id, limit: 2 }))).toEqual(names(all.slice(2, 4)));
      const ascending = await store.find('things', { sort: [{ field: 'id', direction: 'asc' }], after: all[4].id });
      expect(names(ascending)).toEqual(names(all.slice(0, 4).reverse()));
      const selected = await store.find('things', { select: ['name'], limit: 1 });
      expect(selected).toEqual([{ id: all[0].id, name: all[0].name }]);
    });

    const aggregate = (collection: string, query: Partial<AggregateQuery>) =>
      store.aggregate(collection, {
        groupBy: [],
        timeZone: 'UTC',
        measures: [],
        sort: [],
        limit: 100,
        skip: 0,
        ...query,
      });
    const keysOf = (result: AggregateResult, field: string) => result.groups.map((g) => [g.key[field], g.count]);

    it('aggregates per group: count, sum, avg, min and max, keys in order', async () => {
      const result = await aggregate('things', {
        groupBy: [{ field: 'kind' }],
        measures: [
          { op: 'sum', field: 'n' },
          { op: 'avg', field: 'n' },
          { op: 'min', field: 'n' },
          { op: 'max', field: 'n' },
          { op: 'sum', field: 'x' },
          { op: 'max', field: 'when' },
        ],
      });
      expect(result.totalGroups).toBe(3);
      expect(result.groups).toEqual([
        {
          key: { kind: 'a' },
          count: 2,
          values: {
            sum: { n: 10, x: 1.5 },
            avg: { n: 10 },
            min: { n: 10 },
            max: { n: 10, when: '2024-03-01T00:00:00.000Z' },
          },
        },
        {
          key: { kind: 'b' },
          count: 2,
          values: { sum: { n: 9, x: -1 }, avg: { n: 4.5 }, min: { n: 2 }, max: { n: 7, when: null } },
        },
        // A group without values: the sum of none is 0, the rest null.
        {
          key: { kind: 'c' },
          count: 1,
          values: { sum: { n: 2, x: 0 }, avg: { n: 2 }, min: { n: 2 }, max: { n: 2, when: null } },
        },
      ]);
    });

    it('groups records without a value under null, first ascending, and sorts by result columns', async () => {
      const byFlag = await aggregate('things', { groupBy: [{ field: 'flag' }] });
      expect(keysOf(byFlag, 'flag')).toEqual([
        [null, 2],
        [false, 1],
        [true, 2],
      ]);
      // Ties in the asked order are broken by the keys ascending; skip and limit page the groups.
      const sorted = await aggregate('things', {
        groupBy: [{ field: 'flag' }],
        sort: [{ column: 'count', direction: 'desc' }],
      });
      expect(keysOf(sorted, 'flag')).toEqual([
        [null, 2],
        [true, 2],
        [false, 1],
      ]);
      const page = await aggregate('things', {
        groupBy: [{ field: 'flag' }],
        sort: [{ column: 'count', direction: 'desc' }],
        skip: 1,
        limit: 1,
      });
      expect(page).toEqual({ groups: [{ key: { flag: true }, count: 2, values: {} }], totalGroups: 3 });
      expect(await aggregate('things', { groupBy: [{ field: 'flag' }], skip: 10 })).toEqual({
        groups: [],
        totalGroups: 3,
      });
      const bySum = await aggregate('things', {
        groupBy: [{ field: 'kind' }, { field: 'flag' }],
        measures: [{ op: 'sum', field: 'n' }],
        sort: [{ column: 'sum.n', direction: 'desc' }],
      });
      expect(bySum.groups.map((g) => [g.key.kind, g.key.flag, g.values.sum!.n])).toEqual([
        ['a', true, 10],
        ['b', null, 7],
        ['b', false, 2],
        ['c', true, 2],
        ['a', null, 0],
      ]);
    });

    it('aggregates only what the where tree and the text search match', async () => {
      const filtered = await aggregate('things', {
        where: { field: 'n', op: 'gt', value: 2 },
        groupBy: [{ field: 'kind' }],
      });
      expect(keysOf(filtered, 'kind')).toEqual([
        ['a', 1],
        ['b', 1],
      ]);
      const searched = await aggregate('things', { text: 'fruit', groupBy: [{ field: 'kind' }] });
      expect(keysOf(searched, 'kind')).toEqual([
        ['a', 1],
        ['b', 1],
      ]);
      // No keys: one group, even of nothing.
      const none = await aggregate('things', {
        where: { field: 'kind', op: 'in', value: [] },
        measures: [
          { op: 'sum', field: 'n' },
          { op: 'avg', field: 'n' },
        ],
      });
      expect(none).toEqual({
        groups: [{ key: {}, count: 0, values: { sum: { n: 0 }, avg: { n: null } } }],
        totalGroups: 1,
      });
      const all = await aggregate('things', { measures: [{ op: 'sum', field: 'n' }] });
      expect(all.groups).toEqual([{ key: {}, count: 5, values: { sum: { n: 21 } } }]);
    });

    it('buckets dates by day, week, month and year in a time zone', async () => {
      const buckets = async (bucket: DateBucket, timeZone: string) =>
        keysOf(await aggregate('happenings', { groupBy: [{ field: 'at', bucket }], timeZone }), 'at');
      expect(await buckets('day', 'UTC')).toEqual([
        [null, 1],
        ['2024-01-01', 1],
        ['2024-03-30', 1],
        ['2024-03-31', 1],
        ['2024-12-31', 1],
      ]);
      expect(await buckets('day', 'Europe/Berlin')).toEqual([
        [null, 1],
        ['2024-01-01', 1],
        ['2024-03-31', 1],
        ['2024-04-01', 1],
        ['2025-01-01', 1],
      ]);
      // Weeks start on Monday; the daylight-saving change moves the second record into the next week.
      expect(await buckets('week', 'UTC')).toEqual([
        [null, 1],
        ['2024-01-01', 1],
        ['2024-03-25', 2],
        ['2024-12-30', 1],
      ]);
      expect(await buckets('week', 'Europe/Berlin')).toEqual([
        [null, 1],
        ['2024-01-01', 1],
        ['2024-03-25', 1],
        ['2024-04-01', 1],
        ['2024-12-30', 1],
      ]);
      expect(await buckets('month', 'Europe/Berlin')).toEqual([
        [null, 1],
        ['2024-01-01', 1],
        ['2024-03-01', 1],
        ['2024-04-01', 1],
        ['2025-01-01', 1],
      ]);
      expect(await buckets('year', 'America/New_York')).toEqual([
        [null, 1],
        ['2023-01-01', 1],
        ['2024-01-01', 3],
      ]);
    });

    it('sums floats and orders text keys by code point', async () => {
      const result = await aggregate('happenings', {
        groupBy: [{ field: 'place' }],
        measures: [
          { op: 'sum', field: 'amount' },
          { op: 'avg', field: 'amount' },
          { op: 'min', field: 'at' },
        ],
      });
      expect(result.groups.map((g) => g.key.place)).toEqual(['Z', 'x', 'y']);
      expect(result.groups[1].values.sum!.amount).toBeCloseTo(0.3, 12);
      expect(result.groups[2].values.avg!.amount).toBeCloseTo(0.1505, 12);
      expect(result.groups[0].values).toEqual({ sum: { amount: 0 }, avg: { amount: null }, min: { at: null } });
      expect(result.groups[2].values.min!.at).toBe('2024-01-01T00:00:00.000Z');
    });

    it('updates partially, clears with null, and refuses unique duplicates naming the field', async () => {
      const updated = await store.update('things', docs[1].id, { note: null, code: 'C-1', n: 3 });
      expect(updated).toMatchObject({ name: 'Banana', note: null, code: 'C-1', n: 3 });
      await expect(store.update('things', docs[2].id, { code: 'C-1' })).rejects.toBeInstanceOf(UniqueConflict);
      await expect(store.insert('things', make({ name: 'dup', code: 'C-1' }))).rejects.toMatchObject({ field: 'code' });
      expect(await store.update('things', newId(), { n: 1 })).toBeNull();
      expect(await store.update('things', docs[1].id, { n: 4 }, { field: 'kind', op: 'eq', value: 'a' })).toBeNull();
      expect(names(await store.find('things', { text: 'yellow' }))).toEqual([]);
    });

    it('increments atomically under 100 concurrent callers', async () => {
      const doc = await store.insert('things', make({ name: 'counter', n: 0, x: 0 }));
      await Promise.all(Array.from({ length: 100 }, () => store.increment('things', doc.id, { n: 1, x: 0.5 })));
      expect(await store.get('things', doc.id)).toMatchObject({ n: 100, x: 50 });
      expect((await store.increment('things', doc.id, { n: -101 }))!.n).toBe(-1);
      await store.remove('things', doc.id);
    });

    it('commits a transaction together or not at all', async () => {
      const before = await store.count('things', {});
      await expect(
        store.transaction(async (tx) => {
          await tx.insert('things', make({ name: 'in tx' }));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await store.count('things', {})).toBe(before);
      await store.transaction(async (tx) => {
        await tx.insert('things', make({ name: 'kept 1' }));
        await tx.insert('things', make({ name: 'kept 2' }));
      });
      expect(await store.count('things', {})).toBe(before + 2);
      await expect(
        store.insertMany('things', [make({ name: 'm1', code: 'M' }), make({ name: 'm2', code: 'M' })]),
      ).rejects.toBeInstanceOf(UniqueConflict);
      expect(await store.count('things', {})).toBe(before + 2);
    });

    it('finds existing records by contains once their text field becomes a filter', async () => {
      // The same entity with `name` added to its filters: the store keeps a folded copy of it from now on.
      const withNameFilter = modelFromInputs({
        entityFiles: [
          {
            file: 'things.yaml',
            text: THINGS_ENTITY.replace('filters: [kind, tags, flag, note]', 'filters: [kind, tags, flag, note, name]'),
            origin: 'app',
          },
        ],
      });
      await store.init(withNameFilter);
      try {
        const found = await store.find('things', {
          where: { field: 'name', op: 'textContains', value: 'ECLA' },
        });
        expect(names(found)).toEqual(['Éclair']);
      } finally {
        await store.init(conformanceModel);
      }
    });

    it('removes a record and its search entry', async () => {
      const doc = await store.insert('things', make({ name: 'zebra crossing' }));
      expect(await store.count('things', { text: 'zebra' })).toBe(1);
      expect(await store.remove('things', doc.id, { field: 'kind', op: 'eq', value: 'a' })).toBe(false);
      expect(await store.remove('things', doc.id)).toBe(true);
      expect(await store.count('things', { text: 'zebra' })).toBe(0);
      expect(await store.remove('things', doc.id)).toBe(false);
    });
  });
}
