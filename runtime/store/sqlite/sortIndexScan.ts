import { indexesFor, type PlannedIndex } from '../common/indexPlan.js';
import type { TableLayout } from '../common/tableLayout.js';
import type { SqlDialect } from '../sql/dialect.js';
import { ident } from '../sql/ident.js';
import { conditionsOf, fieldList, type Statement } from '../sql/statements.js';
import type { FindQuery, Where } from '../types.js';
import { PAGING } from './sqliteDialect.js';

/** Filters keeping fewer records than this are read through their own index and sorted: cheap enough. */
export const MIN_MATCHING = 1_000;
/** The walk reads this many times the index entries the page should need, so uneven data still fits. */
const MARGIN = 4;

/**
 * A page sorted by an indexed field, filtered by conditions that keep many records (a date range
 * ordered by views): SQLite reads every record the filter's index selects and sorts them, about
 * 10,000 rows for a week of 100,000 articles, while walking the sort field's index from its start
 * and stopping at the page's last match reads a few hundred. The walk is bounded: only the first
 * `entries` entries of the index, estimated from how many records the filter keeps (`matching`,
 * the count the list just asked for) against the table's size, so data whose order and filter go
 * together cannot make it read the whole index. A page that does not fill within them is read the
 * usual way; one that does is exactly the page, since every later record sorts after it.
 */
export interface SortIndexScan {
  /** The sort key and id of the index's last entry the walk may read (`LIMIT 1 OFFSET entries - 1`). */
  bound: Statement;
  /** Any record without the sort value: for an ascending order those come first, so the walk does not apply. */
  nulls?: Statement;
  /** The page, walking the index up to the bound (or to its end when the index is shorter). */
  page(bound: readonly unknown[] | undefined): Statement;
  limit: number;
}

export function sortIndexScan(
  layout: TableLayout,
  query: FindQuery,
  dialect: SqlDialect,
  matching: number,
  tableSize: number,
): SortIndexScan | undefined {
  const { sort, limit, skip = 0 } = query;
  if (limit === undefined || query.after !== undefined || query.collation || query.select) return undefined;
  if (matching < MIN_MATCHING || sort?.length !== 2) return undefined;
  const [key, tie] = sort;
  if (key.field === 'id' || tie.field !== 'id' || tie.direction !== key.direction) return undefined;
  const column = layout.columns.get(key.field);
  if (!column || column.kind === 'json') return undefined;
  const sortColumn = column.sortKey ?? column.field;
  const live = requiresLive(query.where);
  const index = indexesFor(layout.indexes, 'sqlite').find(
    (candidate: PlannedIndex) =>
      candidate.method === 'btree' &&
      candidate.columns[0] === sortColumn &&
      candidate.columns[1] === 'id' &&
      (!candidate.live || live),
  );
  if (!index) return undefined;
  const entries = Math.ceil((MARGIN * (skip + limit) * Math.max(tableSize, matching)) / matching);
  // The filter's own index reads `matching` records and sorts them: the walk must expect a quarter
  // of that at most (`entries / MARGIN`), and even its bound may not read more.
  if (entries > matching) return undefined;

  const table = `${ident(layout.table)} INDEXED BY ${ident(index.name)}`;
  const direction = key.direction === 'asc' ? 'ASC' : 'DESC';
  const order = `${ident(sortColumn)} ${direction}, "id" ${direction}`;
  const liveOnly = index.live ? ' WHERE "archivedAt" IS NULL' : '';
  return {
    limit,
    bound: {
      sql: `SELECT ${ident(sortColumn)}, "id" FROM ${table}${liveOnly} ORDER BY ${order} LIMIT 1 OFFSET ?`,
      params: [entries - 1],
    },
    nulls:
      direction === 'ASC'
        ? {
            sql: `SELECT 1 FROM ${table} WHERE ${ident(sortColumn)} IS NULL${index.live ? ' AND "archivedAt" IS NULL' : ''} LIMIT 1`,
            params: [],
          }
        : undefined,
    page(bound) {
      const params: unknown[] = [];
      const conditions = conditionsOf(layout, query, dialect, params);
      if (bound) {
        // The first entries in this order are those up to the bound: the largest for a descending one.
        conditions.push(`(${ident(sortColumn)}, "id") ${direction === 'ASC' ? '<=' : '>='} (?, ?)`);
        params.push(...bound);
      }
      params.push(limit, skip);
      const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
      return {
        sql: `SELECT ${fieldList(layout)} FROM ${table}${where} ORDER BY ${order}${PAGING}`,
        params,
      };
    },
  };
}

/** Whether a where keeps archived records out at its top level (what a partial index over live records needs). */
function requiresLive(where: Where | undefined): boolean {
  if (!where) return false;
  if ('and' in where) return where.and.some(requiresLive);
  return 'field' in where && where.field === 'archivedAt' && where.op === 'exists' && where.value === false;
}
