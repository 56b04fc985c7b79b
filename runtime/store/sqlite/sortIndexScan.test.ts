import { describe, expect, it } from 'vitest';
import { registry } from '../../../generated/index.js';
import { tableLayout } from '../common/tableLayout.js';
import type { FindQuery, Where } from '../types.js';
import { sortIndexScan } from './sortIndexScan.js';
import { sqliteDialect } from './sqliteDialect.js';
import { SqliteStore } from './sqliteStore.js';

const EPOCH = Date.parse('2026-01-01T00:00:00.000Z');
const live: Where = { field: 'archivedAt', op: 'exists', value: false };
const between = (from: number, to: number): Where => ({
  and: [
    live,
    { field: 'createdAt', op: 'gte', value: new Date(EPOCH - to * 60_000).toISOString() },
    { field: 'createdAt', op: 'lt', value: new Date(EPOCH - from * 60_000).toISOString() },
  ],
});

/** A seeded random sequence, so a failure can be run again as it was. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

async function seeded(records: number, nullViews: (n: number) => boolean) {
  const store = SqliteStore.open(':memory:');
  await store.init(registry.model);
  const next = random(7);
  const docs = Array.from({ length: records }, (_, n) => ({
    id: (10 ** 12 + n).toString(16).padStart(24, '0'),
    ownerId: '0'.repeat(24),
    createdAt: new Date(EPOCH - n * 60_000).toISOString(),
    updatedAt: new Date(EPOCH).toISOString(),
    archivedAt: n % 13 === 0 ? new Date(EPOCH).toISOString() : null,
    title: `Article ${n}`,
    views: nullViews(n) ? null : Math.floor(next() * 500),
    kind: ['news', 'opinion', 'guide'][n % 3],
    tags: [],
    related: [],
  }));
  await store.insertMany('articles', docs);
  return store;
}

describe('walking the sort index for a page', () => {
  it('is planned for a wide filter sorted by an indexed field, and not for a narrow one or an unindexed order', () => {
    const layout = tableLayout(registry.model.entities.find((entity) => entity.plural === 'articles')!);
    const page: FindQuery = {
      where: between(0, 10_000),
      sort: [
        { field: 'views', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ],
      limit: 25,
    };
    // A week of 100,000: about 400 index entries against 10,000 records read and sorted.
    expect(sortIndexScan(layout, page, sqliteDialect, 10_000, 100_000)?.bound.params).toEqual([999]);
    // Few matches: the filter's own index is cheaper.
    expect(sortIndexScan(layout, page, sqliteDialect, 500, 100_000)).toBeUndefined();
    // The walk would read about as much as the filter.
    expect(sortIndexScan(layout, page, sqliteDialect, 2_000, 100_000)).toBeUndefined();
    // No index leads with the field; a cursor; a partial index the filter does not imply.
    const unindexed = { ...page, sort: [{ field: 'rating', direction: 'desc' as const }, page.sort![1]] };
    expect(sortIndexScan(layout, unindexed, sqliteDialect, 10_000, 100_000)).toBeUndefined();
    expect(sortIndexScan(layout, { ...page, after: 'x' }, sqliteDialect, 10_000, 100_000)).toBeUndefined();
    const archivedToo = { ...page, where: { field: 'kind', op: 'eq' as const, value: 'news' } };
    expect(sortIndexScan(layout, archivedToo, sqliteDialect, 10_000, 100_000)).toBeUndefined();
  });

  it('answers exactly the page the usual plan answers, for any range, order, offset and nulls', async () => {
    for (const nullViews of [() => false, (n: number) => n % 17 === 0]) {
      const store = await seeded(6_000, nullViews);
      const next = random(11);
      for (let round = 0; round < 60; round++) {
        const from = Math.floor(next() * 3_000);
        const to = from + 1_200 + Math.floor(next() * 3_000);
        const direction = next() < 0.5 ? ('asc' as const) : ('desc' as const);
        const field = next() < 0.7 ? 'views' : 'title';
        const query: FindQuery = {
          where: between(from, to),
          sort: [
            { field, direction },
            { field: 'id', direction },
          ],
          limit: 1 + Math.floor(next() * 40),
          skip: next() < 0.3 ? Math.floor(next() * 50) : 0,
        };
        const matching = await store.count('articles', { where: query.where });
        const usual = await store.find('articles', query);
        const walked = await store.find('articles', { ...query, matching });
        expect(walked.map((doc) => doc.id)).toEqual(usual.map((doc) => doc.id));
        expect(walked).toEqual(usual);
      }
      await store.close();
    }
  });
});
