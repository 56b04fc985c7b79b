import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { KnownIdSets } from './knownIdSets.js';

const idsOf = (n: number, prefix = 'r') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);

function open() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE comments (id TEXT PRIMARY KEY, article TEXT)');
  const insert = db.prepare('INSERT INTO comments VALUES (?, ?)');
  for (let i = 0; i < 200; i++) insert.run(`c${i}`, `r${String(i % 50).padStart(5, '0')}`);
  return { db, sets: new KnownIdSets(db) };
}

const countWhereIn = (db: Database.Database, subquery: string) =>
  (db.prepare(`SELECT COUNT(*) AS n FROM comments WHERE article IN (${subquery})`).get() as { n: number }).n;

describe('known id sets', () => {
  it('binds a list seen once, keeps it in a table the second time, and answers the same rows', () => {
    const { db, sets } = open();
    const ids = idsOf(20);
    expect(sets.subquery(ids)).toBeUndefined();
    const subquery = sets.subquery(ids)!;
    expect(subquery).toMatch(/^SELECT "id" FROM entigen_known\."ids_\d+"$/);
    expect(sets.subquery(ids)).toBe(subquery);
    // 20 of the 50 articles, 4 comments each.
    expect(countWhereIn(db, subquery)).toBe(80);
    expect(countWhereIn(db, `SELECT value FROM json_each('${JSON.stringify(ids)}')`)).toBe(80);
  });

  it('keeps no table for short lists, and makes none inside a transaction', () => {
    const { db, sets } = open();
    const short = idsOf(3);
    sets.subquery(short);
    expect(sets.subquery(short)).toBeUndefined();
    const ids = idsOf(30);
    sets.subquery(ids);
    db.exec('BEGIN');
    expect(sets.subquery(ids)).toBeUndefined();
    db.exec('ROLLBACK');
    expect(sets.subquery(ids)).toBeDefined();
    expect(sets.size).toBe(1);
  });

  it('survives a change of temp_store, which drops temporary tables', () => {
    const { db, sets } = open();
    const ids = idsOf(20);
    sets.subquery(ids);
    const subquery = sets.subquery(ids)!;
    db.exec('PRAGMA temp_store = MEMORY');
    db.exec('PRAGMA temp_store = DEFAULT');
    expect(countWhereIn(db, subquery)).toBe(80);
  });

  it('drops the least recently used set beyond its bound', () => {
    const { db, sets } = open();
    const lists = Array.from({ length: 70 }, (_, i) => idsOf(16, `s${i}-`));
    const first = lists[0];
    sets.subquery(first);
    const firstTable = sets.subquery(first)!;
    for (const list of lists.slice(1)) {
      sets.subquery(list);
      sets.subquery(list);
    }
    expect(sets.size).toBe(64);
    expect(() => db.prepare(firstTable).all()).toThrow(/no such table/);
    // The most recent is still there.
    expect(db.prepare(sets.subquery(lists[69])!).all()).toHaveLength(16);
  });
});
