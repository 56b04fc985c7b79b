import type { Column, TableLayout } from '../common/tableLayout.js';
import type { Collation, DateBucket } from '../types.js';

export type Direction = 'ASC' | 'DESC';

/**
 * What differs between the SQL stores. Everything else about a statement is built once, in
 * `statements.ts`; the stores keep only their connection, transactions and error mapping.
 */
export interface SqlDialect {
  /** Adds a bound value to `params` and returns its placeholder. */
  bind(params: unknown[], value: unknown): string;
  /** Condition: the JSON array column holds any of the placeholders. */
  jsonArrayHasAny(column: string, placeholders: string[]): string;
  /** A one-column subquery of the text values of a JSON array given as a bound parameter. */
  valuesOfJsonArray(placeholder: string): string;
  /**
   * A one-column subquery of ids the connection keeps (a set it has seen before), or undefined
   * to bind them with valuesOfJsonArray.
   */
  knownIds?(ids: readonly string[]): string | undefined;
  /** Condition: the JSON array column holds any value the one-column subquery selects. */
  jsonArrayHasAnyOf(column: string, subquery: string): string;
  /** Booleans stored as 0/1 (SQLite) rather than as booleans (PostgreSQL). */
  booleansAsIntegers: boolean;
  /** Condition: the record's search text holds every term as a word prefix (terms are never empty). */
  textMatch(layout: TableLayout, terms: string[], params: unknown[]): string;
  /** One ORDER BY part for a text column under an explicit collation. */
  collate(column: Column, collation: Collation, direction: Direction, params: unknown[]): string;
  /** Where NULLs go in an ORDER BY part: first ascending, last descending, on every store. */
  nulls(direction: Direction): string;
  /** LIMIT and OFFSET of a find (with a leading space), or ''. */
  paging(limit: number | undefined, skip: number | undefined, params: unknown[]): string;
  /** The COUNT(*) expression, so that the driver returns a JavaScript number. */
  countAll: string;
  /** COUNT(*) OVER (): the number of rows of the whole result, on every row of its page. */
  countOver: string;
  /** The local start date (`YYYY-MM-DD`) of the bucket a stored timestamp falls in, in a time zone. */
  dateBucket(column: string, bucket: DateBucket, timeZone: string, params: unknown[]): string;
  /** Sum of a numeric column as a float (0 for no values), never an overflow. */
  sum(column: string): string;
  /** Average of a numeric column as a float (null for no values). */
  avg(column: string): string;
  /** A text expression ordered by code points, whatever the database's collation. */
  binaryText(expression: string): string;
}
