import { describe, expect, it } from 'vitest';
import type { AggregateQuery, AggregateResult, Doc } from '../types.js';
import { foldInserted } from './foldAggregate.js';

const query: AggregateQuery = {
  groupBy: [{ field: 'kind' }],
  timeZone: 'UTC',
  measures: [{ op: 'sum', field: 'views' }],
  sort: [],
  limit: 10,
  skip: 0,
  where: { field: 'status', op: 'eq', value: 'published' },
};
const result: AggregateResult = {
  groups: [
    { key: { kind: 'guide' }, count: 2, values: { sum: { views: 30 } } },
    { key: { kind: 'news' }, count: 1, values: { sum: { views: 5 } } },
  ],
  totalGroups: 2,
};
const doc = (fields: Record<string, unknown>) => ({ id: 'x', status: 'published', ...fields }) as Doc;

describe('foldInserted', () => {
  it('adds matching records to their groups and leaves the others out', () => {
    const after = foldInserted(query, result, [
      doc({ kind: 'news', views: 7 }),
      doc({ kind: 'news', views: null }),
      doc({ kind: 'guide', views: 1, status: 'draft' }),
    ]);
    expect(after).toEqual({
      groups: [
        { key: { kind: 'guide' }, count: 2, values: { sum: { views: 30 } } },
        { key: { kind: 'news' }, count: 3, values: { sum: { views: 12 } } },
      ],
      totalGroups: 2,
    });
    // The remembered result itself is not changed.
    expect(result.groups[1].count).toBe(1);
  });

  it('orders by a changed count or measure when no tie needs the keys', () => {
    const byCount: AggregateQuery = { ...query, sort: [{ column: 'count', direction: 'desc' }] };
    const after = foldInserted(byCount, result, [doc({ kind: 'news', views: 1 }), doc({ kind: 'news', views: 1 })]);
    expect(after?.groups.map((g) => [g.key.kind, g.count])).toEqual([
      ['news', 3],
      ['guide', 2],
    ]);
    // One more would tie them: which comes first is the store's collation's to say.
    expect(foldInserted(byCount, result, [doc({ kind: 'news', views: 1 })])).toBeUndefined();
  });

  it('declines what it cannot answer exactly, so the store is asked again', () => {
    const news = [doc({ kind: 'news', views: 1 })];
    expect(foldInserted(query, result, [doc({ kind: 'opinion', views: 1 })])).toBeUndefined();
    expect(foldInserted(query, result, [doc({ kind: 'news', views: 1.5 })])).toBeUndefined();
    expect(foldInserted({ ...query, skip: 1 }, result, news)).toBeUndefined();
    expect(foldInserted(query, { ...result, totalGroups: 3 }, news)).toBeUndefined();
    expect(foldInserted({ ...query, text: 'x' }, result, news)).toBeUndefined();
    expect(foldInserted({ ...query, measures: [{ op: 'avg', field: 'views' }] }, result, news)).toBeUndefined();
    expect(foldInserted({ ...query, groupBy: [{ field: 'at', bucket: 'day' }] }, result, news)).toBeUndefined();
    expect(
      foldInserted({ ...query, where: { field: 'title', op: 'textContains', value: 'e' } }, result, news),
    ).toBeUndefined();
    expect(
      foldInserted(
        { ...query, where: { through: { field: 'author', collection: 'users', where: undefined } } } as AggregateQuery,
        result,
        news,
      ),
    ).toBeUndefined();
    // A range over text compares code points in the stores: only ASCII is compared in memory.
    const range: AggregateQuery = { ...query, where: { field: 'title', op: 'gt', value: 'm' } };
    expect(foldInserted(range, result, [doc({ kind: 'news', views: 1, title: 'zebra' })])?.groups[1].count).toBe(2);
    expect(foldInserted(range, result, [doc({ kind: 'news', views: 1, title: '\uFF5Aebra' })])).toBeUndefined();
  });
});
