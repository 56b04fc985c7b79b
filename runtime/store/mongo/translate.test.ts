import { describe, expect, it } from 'vitest';
import { toMongoCollation, toMongoFilter, toMongoSort, toMongoTextFilter } from './translate.js';

const layout = { sortKeyFields: new Set(['name']), searchable: true };

describe('IR -> MongoDB', () => {
  it.each([
    [{ field: 'kind', op: 'eq', value: 'a' }, { kind: 'a' }],
    [{ field: 'id', op: 'eq', value: 'x' }, { _id: 'x' }],
    [{ field: 'n', op: 'eq', value: null }, { n: null }],
    [{ field: 'n', op: 'ne', value: 2 }, { n: { $ne: 2 } }],
    [{ field: 'n', op: 'ne', value: null }, { n: { $ne: null } }],
    [{ field: 'kind', op: 'in', value: ['b', 'c'] }, { kind: { $in: ['b', 'c'] } }],
    [{ field: 'kind', op: 'in', value: [] }, { $expr: false }],
    [{ field: 'n', op: 'gte', value: 7 }, { n: { $gte: 7 } }],
    [{ field: 'x', op: 'lt', value: 0 }, { x: { $lt: 0 } }],
    [{ field: 'note', op: 'exists', value: true }, { note: { $ne: null } }],
    [{ field: 'note', op: 'exists', value: false }, { note: null }],
    [{ field: 'tags', op: 'contains', value: 'blue' }, { tags: { $in: ['blue'] } }],
    [{ field: 'tags', op: 'contains', value: ['red', 'green'] }, { tags: { $in: ['red', 'green'] } }],
    [{ and: [] }, {}],
    [{ or: [] }, { $expr: false }],
    [
      {
        and: [
          { field: 'a', op: 'eq', value: 1 },
          { or: [{ field: 'b', op: 'gt', value: 2 }, { not: { field: 'c', op: 'eq', value: 3 } }] },
        ],
      },
      { $and: [{ a: 1 }, { $or: [{ b: { $gt: 2 } }, { c: { $nin: [null, 3] } }] }] },
    ],
    [{ not: { field: 'n', op: 'gt', value: 1 } }, { n: { $ne: null, $not: { $gt: 1 } } }],
    [
      {
        not: {
          and: [
            { field: 'a', op: 'eq', value: null },
            { field: 'b', op: 'ne', value: 2 },
          ],
        },
      },
      { $or: [{ a: { $ne: null } }, { b: 2 }] },
    ],
    [{ not: { or: [] } }, {}],
  ])('translates %j', (where, expected) => {
    expect(toMongoFilter(where as never)).toEqual(expected);
  });

  it('searches word prefixes in the normalized text, every term, escaping regex characters', () => {
    expect(toMongoTextFilter('Café LA', layout)).toEqual({
      $and: [{ _words: { $regex: '^cafe' } }, { _words: { $regex: '^la' } }],
    });
    expect(toMongoTextFilter('a.b', layout)).toEqual({
      $and: [{ _words: { $regex: '^a' } }, { _words: { $regex: '^b' } }],
    });
    expect(toMongoTextFilter('x', { ...layout, searchable: false })).toEqual({ $expr: false });
    expect(toMongoTextFilter('!!!', layout)).toBeUndefined();
  });

  it('sorts text by the natural-order key, others natively, id last in the last direction', () => {
    expect(toMongoSort({ sort: [{ field: 'name', direction: 'asc' }] }, layout)).toEqual([
      ['_sk_name', 1],
      ['_id', 1],
    ]);
    expect(toMongoSort({ sort: [{ field: 'n', direction: 'desc' }] }, layout)).toEqual([
      ['n', -1],
      ['_id', -1],
    ]);
    expect(toMongoSort({}, layout)).toEqual([['_id', -1]]);
    expect(toMongoSort({ sort: [{ field: 'id', direction: 'asc' }] }, layout)).toEqual([['_id', 1]]);
    // An explicit collation sorts the raw field; MongoDB applies the collation itself.
    expect(toMongoSort({ sort: [{ field: 'name', direction: 'asc' }], collation: { locale: 'de' } }, layout)).toEqual([
      ['name', 1],
      ['_id', 1],
    ]);
  });

  it('passes explicit collations in MongoDB terms', () => {
    expect(toMongoCollation({ locale: 'en', strength: 1, numericOrdering: true })).toEqual({
      locale: 'en',
      strength: 1,
      numericOrdering: true,
    });
    expect(toMongoCollation({ locale: 'de' })).toEqual({ locale: 'de', strength: 3, numericOrdering: false });
    expect(toMongoCollation(undefined)).toBeUndefined();
  });
});
