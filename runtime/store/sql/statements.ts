import { searchTerms } from '../common/searchText.js';
import type { TableLayout } from '../common/tableLayout.js';
import type { CountQuery, FindQuery, IncrementInput, Where } from '../types.js';
import { compileWhere } from './compileWhere.js';
import type { SqlDialect } from './dialect.js';
import { ident } from './ident.js';
import { orderByClause } from './orderBy.js';

/** A statement and its bound values, in placeholder order. No value ever appears in `sql`. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** Column name -> encoded value, as `encodeFields` returns it. */
export type ColumnValues = Map<string, unknown>;

const fieldLists = new WeakMap<TableLayout, string>();

/**
 * The record's own columns, without the sort keys and folded text stored beside them: what
 * decodeRow reads, so the driver builds no values nobody uses.
 */
export function fieldList(layout: TableLayout): string {
  let list = fieldLists.get(layout);
  if (list === undefined) {
    list = [...layout.columns.keys()].map(ident).join(', ');
    fieldLists.set(layout, list);
  }
  return list;
}

/** The page of a find, and the fields it reads (`undefined`: every column). */
export function selectStatement(
  layout: TableLayout,
  query: FindQuery,
  dialect: SqlDialect,
): Statement & { select?: string[] } {
  const params: unknown[] = [];
  const select = query.select ? ['id', ...query.select.filter((f) => f !== 'id' && layout.columns.has(f))] : undefined;
  const conditions = conditionsOf(layout, query, dialect, params);
  if (query.after !== undefined) {
    const idDirection = query.sort?.find((s) => s.field === 'id')?.direction ?? 'desc';
    conditions.push(`"id" ${idDirection === 'asc' ? '>' : '<'} ${dialect.bind(params, query.after)}`);
  }
  let sql = `SELECT ${select ? select.map(ident).join(', ') : fieldList(layout)} FROM ${ident(layout.table)}${whereClause(conditions)}`;
  sql += ` ORDER BY ${orderByClause(layout, query, dialect, params)}`;
  sql += dialect.paging(query.limit, query.skip, params);
  return { sql, params, select };
}

/** The number of rows a count query matches, as column `n`. */
export function countStatement(layout: TableLayout, query: CountQuery, dialect: SqlDialect): Statement {
  const params: unknown[] = [];
  const conditions = conditionsOf(layout, query, dialect, params);
  return { sql: `SELECT ${dialect.countAll} AS n FROM ${ident(layout.table)}${whereClause(conditions)}`, params };
}

export function getStatement(
  layout: TableLayout,
  id: string,
  where: Where | undefined,
  dialect: SqlDialect,
): Statement {
  const params: unknown[] = [];
  return {
    sql: `SELECT ${fieldList(layout)} FROM ${ident(layout.table)}${byId(layout, id, where, dialect, params)}`,
    params,
  };
}

export function insertStatement(layout: TableLayout, values: ColumnValues, dialect: SqlDialect): Statement {
  const params: unknown[] = [];
  const columns = [...values.keys()];
  const placeholders = [...values.values()].map((value) => dialect.bind(params, value));
  return {
    sql: `INSERT INTO ${ident(layout.table)} (${columns.map(ident).join(', ')}) VALUES (${placeholders.join(', ')})`,
    params,
  };
}

/** Sets `values` on the record and returns its row; undefined when there is nothing to set. */
export function updateStatement(
  layout: TableLayout,
  id: string,
  values: ColumnValues,
  where: Where | undefined,
  dialect: SqlDialect,
): Statement | undefined {
  const params: unknown[] = [];
  const assignments = [...values]
    .filter(([column]) => column !== 'id')
    .map(([column, value]) => `${ident(column)} = ${dialect.bind(params, value)}`);
  if (assignments.length === 0) return undefined;
  return {
    sql: `UPDATE ${ident(layout.table)} SET ${assignments.join(', ')}${byId(layout, id, where, dialect, params)} RETURNING ${fieldList(layout)}`,
    params,
  };
}

/** Adds `by` to numeric fields (a missing value counts as 0), sets `values`, and returns the row. */
export function incrementStatement(
  layout: TableLayout,
  id: string,
  by: IncrementInput,
  values: ColumnValues,
  where: Where | undefined,
  dialect: SqlDialect,
): Statement {
  const params: unknown[] = [];
  const assignments = Object.entries(by).map(
    ([field, amount]) => `${ident(field)} = COALESCE(${ident(field)}, 0) + ${dialect.bind(params, amount)}`,
  );
  for (const [column, value] of values) assignments.push(`${ident(column)} = ${dialect.bind(params, value)}`);
  return {
    sql: `UPDATE ${ident(layout.table)} SET ${assignments.join(', ')}${byId(layout, id, where, dialect, params)} RETURNING ${fieldList(layout)}`,
    params,
  };
}

export function deleteStatement(
  layout: TableLayout,
  id: string,
  where: Where | undefined,
  dialect: SqlDialect,
): Statement {
  const params: unknown[] = [];
  return { sql: `DELETE FROM ${ident(layout.table)}${byId(layout, id, where, dialect, params)}`, params };
}

/** ` WHERE "id" = ?` and the access constraint, when there is one. */
function byId(
  layout: TableLayout,
  id: string,
  where: Where | undefined,
  dialect: SqlDialect,
  params: unknown[],
): string {
  const clause = ` WHERE "id" = ${dialect.bind(params, id)}`;
  return where ? `${clause} AND ${compileWhere(where, layout, dialect, params)}` : clause;
}

function whereClause(conditions: string[]): string {
  return conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
}

/** The where tree and the text search of a find or count. */
export function conditionsOf(layout: TableLayout, query: CountQuery, dialect: SqlDialect, params: unknown[]): string[] {
  const conditions: string[] = [];
  if (query.where) conditions.push(compileWhere(query.where, layout, dialect, params));
  if (query.text !== undefined) {
    const terms = searchTerms(query.text);
    if (layout.searchFields.length === 0) conditions.push('1=0');
    else if (terms.length > 0) conditions.push(dialect.textMatch(layout, terms, params));
  }
  return conditions;
}
