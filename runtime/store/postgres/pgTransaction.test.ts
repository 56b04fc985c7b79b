import { describe, expect, it } from 'vitest';
import { withLiterals } from './pgTransaction.js';

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
