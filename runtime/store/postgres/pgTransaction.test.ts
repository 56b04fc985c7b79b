import { describe, expect, it } from 'vitest';
import { heldStatement, joinHeld, withLiterals } from './pgTransaction.js';

describe('withLiterals', () => {
  it('writes each parameter in as pg would send it as text', () => {
    expect(
      withLiterals({
        sql: 'INSERT INTO "t" ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
        params: ["it's", 'a\\b', 42, -1.5, true, false, null, undefined, 'x', 'y', 'z'],
      }),
    ).toBe(
      `INSERT INTO "t" ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k") VALUES (E'it''s', E'a\\\\b', '42', '-1.5', 'true', 'false', NULL, NULL, E'x', E'y', E'z')`,
    );
  });

  it('keeps a value that looks like a placeholder or ends a literal inside its literal', () => {
    expect(withLiterals({ sql: 'SELECT $1, $2', params: ['$2', "\\'; DROP TABLE t; --"] })).toBe(
      `SELECT E'$2', E'\\\\''; DROP TABLE t; --'`,
    );
  });

  it('declines what cannot be a literal of the simple protocol, so the statement runs with parameters', () => {
    expect(withLiterals({ sql: 'SELECT $1', params: ['nul \0 inside'] })).toBeUndefined();
    expect(withLiterals({ sql: 'SELECT $1', params: [Number.NaN] })).toBeUndefined();
    expect(withLiterals({ sql: 'SELECT $1', params: [new Date(0)] })).toBeUndefined();
    expect(withLiterals({ sql: 'SELECT $1', params: [{ a: 1 }] })).toBeUndefined();
  });
});

describe('joinHeld', () => {
  const insert = (table: string, columns: string[], ...params: unknown[]) =>
    heldStatement({
      sql: `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')})`,
      params,
    })!;

  it('writes rows for the same table and columns as one insert, each table keeping its order', () => {
    const held = [
      'BEGIN',
      insert('a', ['id', 'n'], 'a1', 1),
      insert('v', ['id'], 'v1'),
      insert('a', ['id', 'n'], 'a2', 2),
      insert('v', ['id'], 'v2'),
      insert('a', ['id', 'n'], 'a3', 3),
    ];
    expect(joinHeld(held)).toBe(
      `BEGIN;INSERT INTO "a" ("id", "n") VALUES (E'a1', '1'), (E'a2', '2'), (E'a3', '3');INSERT INTO "v" ("id") VALUES (E'v1'), (E'v2')`,
    );
  });

  it('starts a new insert when the columns differ, so no row of a table passes another', () => {
    const held = [insert('a', ['id'], 'a1'), insert('a', ['id', 'n'], 'a2', 2), insert('a', ['id'], 'a3')];
    expect(joinHeld(held)).toBe(
      `INSERT INTO "a" ("id") VALUES (E'a1');INSERT INTO "a" ("id", "n") VALUES (E'a2', '2');INSERT INTO "a" ("id") VALUES (E'a3')`,
    );
  });

  it('moves nothing past a statement that is not a one-row insert', () => {
    const held = [insert('a', ['id'], 'a1'), 'UPDATE "a" SET "n" = 1', insert('a', ['id'], 'a2')];
    expect(joinHeld(held)).toBe(
      `INSERT INTO "a" ("id") VALUES (E'a1');UPDATE "a" SET "n" = 1;INSERT INTO "a" ("id") VALUES (E'a2')`,
    );
  });

  it('keeps a value that reads like SQL inside its literal', () => {
    const held = [insert('a', ['id'], "x'), ('y"), insert('a', ['id'], 'z')];
    expect(joinHeld(held)).toBe(`INSERT INTO "a" ("id") VALUES (E'x''), (''y'), (E'z')`);
  });

  it('holds statements of other shapes as text, and declines values that cannot be literals', () => {
    expect(heldStatement({ sql: 'INSERT INTO "a" ("id") VALUES ($1) RETURNING "id"', params: ['x'] })).toBe(
      `INSERT INTO "a" ("id") VALUES (E'x') RETURNING "id"`,
    );
    expect(heldStatement({ sql: 'INSERT INTO "a" ("id") VALUES ($1)', params: ['nul \0'] })).toBeUndefined();
  });

  describe('numbered rows of a whole transaction', () => {
    const counter = { table: '"sequences"', id: 'events', field: 'value' };
    const event = (id: string) =>
      heldStatement({ sql: 'INSERT INTO "events" ("id", "seq") VALUES ($1, $2)', params: [id, null] }, counter)!;

    it('go last, numbered from one increment of their counter row, in the order they came', () => {
      const held = [event('e1'), insert('a', ['id'], 'a1'), event('e2'), insert('a', ['id'], 'a2')];
      expect(joinHeld(held, true)).toBe(
        `INSERT INTO "a" ("id") VALUES (E'a1'), (E'a2');` +
          `WITH taken AS (UPDATE "sequences" SET "value" = "value" + 2 WHERE "id" = E'events' RETURNING "value" AS "value") ` +
          `SELECT set_config('entigen.number_1', coalesce((SELECT "value" - 2 FROM taken)::text, E'the counter row events is missing'), true);` +
          `INSERT INTO "events" ("id", "seq") VALUES (E'e1', current_setting('entigen.number_1')::bigint + 1), (E'e2', current_setting('entigen.number_1')::bigint + 2)`,
      );
    });

    it('keep their null for the commit-time trigger when the text is not a whole transaction', () => {
      expect(joinHeld([event('e1'), event('e2')])).toBe(
        `INSERT INTO "events" ("id", "seq") VALUES (E'e1', NULL), (E'e2', NULL)`,
      );
    });
  });
});
