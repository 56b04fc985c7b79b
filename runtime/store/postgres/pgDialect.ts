import { normalizeSearch } from '../common/searchText.js';
import type { Direction, SqlDialect } from '../sql/dialect.js';
import { ident } from '../sql/ident.js';
import { SEARCH_COLUMN } from './syncPgSchema.js';

const bind = (params: unknown[], value: unknown): string => {
  params.push(value);
  return `$${params.length}`;
};
const nulls = (direction: Direction): string => (direction === 'ASC' ? ' NULLS FIRST' : ' NULLS LAST');

/** PostgreSQL: numbered placeholders, jsonb arrays, a tsvector over the search vocabulary, ICU collations. */
export const pgDialect: SqlDialect = {
  bind,
  jsonArrayHasAny: (column, placeholders) =>
    `EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(${column}) = 'array' THEN ${column} ELSE '[]'::jsonb END) AS e(v) WHERE e.v IN (${placeholders.map((p) => `${p}::text`).join(', ')}))`,
  valuesOfJsonArray: (placeholder) => `SELECT jsonb_array_elements_text(${placeholder}::jsonb)`,
  jsonArrayHasAnyOf: (column, subquery) =>
    `EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(${column}) = 'array' THEN ${column} ELSE '[]'::jsonb END) AS e(v) WHERE e.v IN (${subquery}))`,
  booleansAsIntegers: false,
  textMatch: (_layout, terms, params) =>
    `to_tsvector('simple', coalesce("${SEARCH_COLUMN}", '')) @@ to_tsquery('simple', ${bind(params, terms.map((t) => `${normalizeSearch(t)}:*`).join(' & '))})`,
  // The collations entigen_s<strength>[n] are created by PgStore.init.
  collate: (column, collation, direction) =>
    `${ident(column.field)} COLLATE ${ident(`entigen_s${collation.strength ?? 3}${collation.numericOrdering ? 'n' : ''}`)} ${direction}${nulls(direction)}`,
  nulls,
  paging(limit, skip, params) {
    let sql = '';
    if (limit !== undefined) sql += ` LIMIT ${bind(params, limit)}`;
    if (skip) sql += ` OFFSET ${bind(params, skip)}`;
    return sql;
  },
  countAll: 'COUNT(*)::int',
  countOver: '(COUNT(*) OVER ())::int',
  // Stored dates are UTC timestamps as text; date_trunc on the local time starts weeks on Monday.
  dateBucket: (column, bucket, timeZone, params) =>
    `to_char(date_trunc(${bind(params, bucket)}, (${column})::timestamptz AT TIME ZONE ${bind(params, timeZone)}), 'YYYY-MM-DD')`,
  sum: (column) => `COALESCE(SUM(${column}), 0)::float8`,
  avg: (column) => `AVG(${column})::float8`,
  binaryText: (expression) => `${expression} COLLATE "C"`,
};
