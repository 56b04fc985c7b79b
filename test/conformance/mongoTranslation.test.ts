import { find, Query, updateOne } from 'mingo';
import { describe, expect, it } from 'vitest';
import { tableLayout } from '../../runtime/store/common/tableLayout.js';
import { fromMongoDoc, mongoLayout, toMongoDoc, toMongoUpdate } from '../../runtime/store/mongo/mongoDocument.js';
import { toMongoFilter, toMongoSort, toMongoTextFilter } from '../../runtime/store/mongo/translate.js';
import type { Doc, FindQuery } from '../../runtime/store/types.js';
import { conformanceModel, conformanceRows, filterCases } from './storeConformance.js';

// Without a MongoDB server, the conformance suite's filter, search and sort cases are evaluated
// on the documents the Mongo adapter would store, by mingo (MongoDB's query language in JS).
const layout = tableLayout(conformanceModel.entities.find((e) => e.plural === 'things')!);
const stored = conformanceRows.map((row, i) =>
  toMongoDoc(layout, { id: `6500000000000000000000${String(i).padStart(2, '0')}`, ...row } as Doc),
);
const names = (docs: Record<string, unknown>[]) => docs.map((d) => d.name);
const run = (query: FindQuery) =>
  find(stored, {
    $and: [toMongoFilter(query.where, mongoLayout(layout)), toMongoTextFilter(query.text, mongoLayout(layout)) ?? {}],
  })
    .sort(Object.fromEntries(toMongoSort(query, mongoLayout(layout))))
    .all();

describe('IR -> MongoDB, evaluated on stored documents', () => {
  it.each(filterCases)('filters %j as the SQL stores do', (where, expected) => {
    expect(names(run({ where, sort: [{ field: 'name', direction: 'asc' }] }))).toEqual(expected);
  });

  it('sorts text naturally and case-insensitively, numbers numerically, nulls first ascending, id descending by default', () => {
    expect(names(run({ sort: [{ field: 'name', direction: 'asc' }] }))).toEqual([
      'apple',
      'Banana',
      'Éclair',
      'item 2',
      'item 10',
    ]);
    expect(names(run({ sort: [{ field: 'n', direction: 'desc' }] }))).toEqual([
      'item 10',
      'Éclair',
      'item 2',
      'Banana',
      'apple',
    ]);
    expect(names(run({}))).toEqual(['Éclair', 'apple', 'item 2', 'Banana', 'item 10']);
  });

  it('searches every term as a word prefix, ignoring case and accents', () => {
    expect(names(run({ text: 'fruit', sort: [{ field: 'name', direction: 'asc' }] }))).toEqual(['apple', 'Banana']);
    expect(names(run({ text: 'CAFE la' }))).toEqual(['item 10']);
    expect(names(run({ text: 'ecl' }))).toEqual(['Éclair']);
    expect(names(run({ text: 'fruit yellow' }))).toEqual(['Banana']);
    expect(names(run({ text: 'ruit' }))).toEqual([]);
  });

  it('keeps unset fields absent, reads them back as null, and round-trips arrays and objects', () => {
    expect(stored[2]).not.toHaveProperty('note');
    expect(stored[4]).not.toHaveProperty('tags');
    expect(fromMongoDoc(layout, stored[0])).toMatchObject({
      name: 'item 10',
      tags: ['red', 'blue'],
      meta: { deep: { v: 1 } },
      code: null,
    });
    expect(fromMongoDoc(layout, stored[0], ['id', 'name'])).toEqual({ id: stored[0]._id, name: 'item 10' });
  });

  it('updates with $set/$unset and increments a missing number from zero with $inc', () => {
    const doc = structuredClone(stored[3]);
    updateOne([doc], { _id: doc._id }, toMongoUpdate(layout, { n: 5, note: null, name: 'Apple 2' }) as never);
    expect(doc).toMatchObject({ n: 5, name: 'Apple 2' });
    expect(doc).not.toHaveProperty('note');
    expect(doc._sk_name).not.toBe(stored[3]._sk_name);
    const counter = structuredClone(stored[3]);
    updateOne(
      [counter],
      { _id: counter._id },
      toMongoUpdate(layout, { updatedAt: '2025-01-01T00:00:00.000Z' }, { n: 2, x: 0.5 }) as never,
    );
    expect(counter).toMatchObject({ n: 2, x: 0.5, updatedAt: '2025-01-01T00:00:00.000Z' });
    expect(new Query(toMongoFilter({ field: 'n', op: 'eq', value: 2 })).test(counter)).toBe(true);
  });
});
