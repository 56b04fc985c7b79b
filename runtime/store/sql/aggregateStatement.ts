import { aggregateValues, sortTarget } from '../common/aggregateValues.js';
import type { TableLayout } from '../common/tableLayout.js';
import type { AggregateGroup, AggregateQuery, AggregateResult } from '../types.js';
import type { Direction, SqlDialect } from './dialect.js';
import { ident } from './ident.js';
import { decodeValue } from './rowCodec.js';
import { conditionsOf, type Statement } from './statements.js';

const KEY = (i: number) => `g${i}`;
const MEASURE = (i: number) => `m${i}`;

/**
 * One statement answers an aggregation: the groups (inner query), their number (a window count
 * over the groups, before the page) and the page in the asked order.
 *
 *   SELECT *, COUNT(*) OVER () AS "_total" FROM (
 *     SELECT <keys> AS g0.., COUNT(*) AS c, <measures> AS m0.. FROM t WHERE .. GROUP BY 1..
 *   ) AS "_groups" ORDER BY .. LIMIT .. OFFSET ..
 */
export function aggregateStatement(layout: TableLayout, query: AggregateQuery, dialect: SqlDialect): Statement {
  const params: unknown[] = [];
  const columns: string[] = [];
  query.groupBy.forEach((key, i) => {
    const column = ident(key.field);
    columns.push(
      `${key.bucket ? dialect.dateBucket(column, key.bucket, query.timeZone, params) : column} AS ${ident(KEY(i))}`,
    );
  });
  columns.push(`${dialect.countAll} AS "c"`);
  query.measures.forEach((measure, i) => {
    const column = ident(measure.field);
    const expression =
      measure.op === 'sum'
        ? dialect.sum(column)
        : measure.op === 'avg'
          ? dialect.avg(column)
          : `${measure.op.toUpperCase()}(${column})`;
    columns.push(`${expression} AS ${ident(MEASURE(i))}`);
  });
  const conditions = conditionsOf(layout, query, dialect, params);
  let inner = `SELECT ${columns.join(', ')} FROM ${ident(layout.table)}`;
  if (conditions.length > 0) inner += ` WHERE ${conditions.join(' AND ')}`;
  if (query.groupBy.length > 0) inner += ` GROUP BY ${query.groupBy.map((_, i) => i + 1).join(', ')}`;

  const order: string[] = [];
  const ordered = new Set<string>();
  const orderBy = (alias: string, direction: Direction, text: boolean) => {
    if (ordered.has(alias)) return;
    ordered.add(alias);
    order.push(`${text ? dialect.binaryText(ident(alias)) : ident(alias)} ${direction}${dialect.nulls(direction)}`);
  };
  const isText = (i: number) =>
    Boolean(query.groupBy[i].bucket) || layout.columns.get(query.groupBy[i].field)?.kind === 'text';
  for (const { column, direction } of query.sort) {
    const dir = direction === 'asc' ? 'ASC' : 'DESC';
    const target = sortTarget(query, column);
    if (!target) continue;
    if ('count' in target) orderBy('c', dir, false);
    else if ('key' in target) orderBy(KEY(target.key), dir, isText(target.key));
    else orderBy(MEASURE(target.measure), dir, false);
  }
  for (let i = 0; i < query.groupBy.length; i++) orderBy(KEY(i), 'ASC', isText(i));
  let sql = `SELECT *, ${dialect.countOver} AS "_total" FROM (${inner}) AS "_groups"`;
  if (order.length > 0) sql += ` ORDER BY ${order.join(', ')}`;
  sql += dialect.paging(query.limit, query.skip, params);
  return { sql, params };
}

/** The rows of `aggregateStatement` as groups; `totalGroups` is undefined when the page came back empty. */
export function decodeAggregateRows(
  layout: TableLayout,
  query: AggregateQuery,
  rows: Record<string, unknown>[],
): { groups: AggregateGroup[]; totalGroups?: number } {
  const groups = rows.map((row): AggregateGroup => {
    const key: Record<string, unknown> = {};
    query.groupBy.forEach((k, i) => {
      const value = row[KEY(i)];
      const kind = layout.columns.get(k.field)?.kind;
      key[k.field] = k.bucket || !kind ? (value ?? null) : decodeValue(kind, value);
    });
    const values = aggregateValues(layout, query.measures, (i) => row[MEASURE(i)]);
    return { key, count: Number(row.c), values };
  });
  return { groups, ...(rows.length > 0 ? { totalGroups: Number(rows[0]._total) } : {}) };
}

/** Runs an aggregation on a SQL store: one statement, and a count of the groups when the page is past the end. */
export async function runAggregate(
  layout: TableLayout,
  query: AggregateQuery,
  dialect: SqlDialect,
  all: (statement: Statement) => Promise<Record<string, unknown>[]>,
): Promise<AggregateResult> {
  const page = decodeAggregateRows(layout, query, await all(aggregateStatement(layout, query, dialect)));
  if (page.totalGroups !== undefined) return { groups: page.groups, totalGroups: page.totalGroups };
  if (query.skip === 0) return { groups: [], totalGroups: 0 };
  const count = await all(aggregateStatement(layout, { ...query, skip: 0, limit: 1 }, dialect));
  return { groups: [], totalGroups: count.length > 0 ? Number(count[0]._total) : 0 };
}
