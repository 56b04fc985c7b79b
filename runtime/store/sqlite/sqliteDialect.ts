import type { SqlDialect } from '../sql/dialect.js';
import { ident } from '../sql/ident.js';
import { ftsTable } from './syncSqliteSchema.js';

/**
 * LIMIT and OFFSET as bound values. Not a bare `LIMIT ?`: SQLite plans with the value bound to
 * it, so binding one again (every run) makes it prepare the statement anew, 10-20 µs a query.
 * The cast hides the value from the planner, as older versions never looked at it.
 */
export const PAGING = ' LIMIT CAST(? AS INTEGER) OFFSET ?';

/** SQLite: `?` placeholders, booleans as 0/1, FTS5 for text, collations by a registered function. */
export const sqliteDialect: SqlDialect = {
  bind(params, value) {
    params.push(value);
    return '?';
  },
  jsonArrayHasAny: (column, placeholders) =>
    `EXISTS (SELECT 1 FROM json_each(${column}) WHERE json_each.value IN (${placeholders.join(', ')}))`,
  valuesOfJsonArray: (placeholder) => `SELECT value FROM json_each(${placeholder})`,
  jsonArrayHasAnyOf: (column, subquery) =>
    `EXISTS (SELECT 1 FROM json_each(${column}) WHERE json_each.value IN (${subquery}))`,
  booleansAsIntegers: true,
  textMatch(layout, terms, params) {
    const fts = ident(ftsTable(layout));
    params.push(terms.map((term) => `"${term}"*`).join(' '));
    return `"id" IN (SELECT id FROM ${fts} WHERE ${fts} MATCH ?)`;
  },
  collate(column, collation, direction, params) {
    // entigen_collate is registered on every connection by SqliteStore.open.
    params.push(collation.strength ?? 3, collation.numericOrdering ? 1 : 0);
    return `entigen_collate(${ident(column.field)}, ?, ?) ${direction}`;
  },
  // SQLite already puts NULLs first ascending and last descending.
  nulls: () => '',
  paging(limit, skip, params) {
    // Always both, so that every page of a query shape is one cached statement.
    params.push(limit ?? -1, skip ?? 0);
    return PAGING;
  },
  countAll: 'COUNT(*)',
  countOver: 'COUNT(*) OVER ()',
  dateBucket(column, bucket, timeZone, params) {
    // entigen_bucket is registered on every connection by SqliteStore.open.
    params.push(bucket, timeZone);
    return `entigen_bucket(${column}, ?, ?)`;
  },
  // TOTAL: a float, 0.0 for no values, and no integer overflow (SUM would throw one).
  sum: (column) => `TOTAL(${column})`,
  avg: (column) => `AVG(${column})`,
  // SQLite compares text with memcmp unless told otherwise.
  binaryText: (expression) => expression,
};
