import { foldText } from '../common/sortKey.js';
import type { TableLayout } from '../common/tableLayout.js';
import type { Condition, Through, Where } from '../types.js';
import type { SqlDialect } from './dialect.js';
import { ident } from './ident.js';

/** Compiles the IR into a SQL condition, binding every value; unknown fields match nothing. */
export function compileWhere(where: Where, layout: TableLayout, dialect: SqlDialect, params: unknown[]): string {
  if ('and' in where)
    return where.and.length === 0
      ? '1=1'
      : `(${where.and.map((w) => compileWhere(w, layout, dialect, params)).join(' AND ')})`;
  if ('or' in where)
    return where.or.length === 0
      ? '1=0'
      : `(${where.or.map((w) => compileWhere(w, layout, dialect, params)).join(' OR ')})`;
  if ('not' in where) return `NOT (${compileWhere(where.not, layout, dialect, params)})`;
  if ('through' in where) return compileThrough(where.through, layout, dialect, params);
  return compileCondition(where, layout, dialect, params);
}

/** The reference (or any reference of the array) is the id of a matching record: a subquery, joined by the planner. */
function compileThrough(through: Through, layout: TableLayout, dialect: SqlDialect, params: unknown[]): string {
  const column = layout.columns.get(through.field);
  const target = layout.siblings?.get(through.collection);
  if (!column || !target || through.viewScopePending) return '1=0';
  let ids: string;
  if (through.ids)
    ids = dialect.knownIds?.(through.ids) ?? dialect.valuesOfJsonArray(dialect.bind(params, idsJson(through.ids)));
  else {
    const inner = through.where ? ` WHERE ${compileWhere(through.where, target, dialect, params)}` : '';
    ids = `SELECT "id" FROM ${ident(target.table)}${inner}`;
  }
  const col = ident(column.field);
  return column.kind === 'json' ? dialect.jsonArrayHasAnyOf(col, ids) : `${col} IN (${ids})`;
}

function compileCondition(condition: Condition, layout: TableLayout, dialect: SqlDialect, params: unknown[]): string {
  const column = layout.columns.get(condition.field);
  if (!column) return '1=0';
  const col = ident(column.field);
  const encode = (value: unknown) =>
    dialect.booleansAsIntegers && column.kind === 'bool' && typeof value === 'boolean' ? Number(value) : value;
  const bind = (value: unknown) => dialect.bind(params, encode(value));
  const { op, value } = condition;
  switch (op) {
    case 'eq':
      return value === null || value === undefined ? `${col} IS NULL` : `${col} = ${bind(value)}`;
    case 'ne':
      return value === null || value === undefined
        ? `${col} IS NOT NULL`
        : `(${col} IS NULL OR ${col} <> ${bind(value)})`;
    case 'in': {
      const values = (value as unknown[]).filter((v) => v !== null && v !== undefined);
      const hasNull = values.length < (value as unknown[]).length;
      const list = values.length > 0 ? `${col} IN (${values.map(bind).join(', ')})` : '1=0';
      return hasNull ? `(${list} OR ${col} IS NULL)` : list;
    }
    case 'nin': {
      const values = (value as unknown[]).filter((v) => v !== null && v !== undefined);
      const hasNull = values.length < (value as unknown[]).length;
      const list = values.length > 0 ? `${col} NOT IN (${values.map(bind).join(', ')})` : '1=1';
      // Like `ne`, records without a value are none of the values (unless null is one of them).
      return hasNull ? `(${col} IS NOT NULL AND ${list})` : `(${col} IS NULL OR ${list})`;
    }
    case 'textContains':
    case 'textStartsWith': {
      // The folded column when the layout keeps one (filter fields); else lower() of the value.
      const target = column.fold ? ident(column.fold) : `lower(${col})`;
      const needle = escapeLike(foldText(String(value)));
      const pattern = op === 'textContains' ? `%${needle}%` : `${needle}%`;
      return `${target} LIKE ${dialect.bind(params, pattern)} ESCAPE '\\'`;
    }
    case 'gt':
      return `${col} > ${bind(value)}`;
    case 'gte':
      return `${col} >= ${bind(value)}`;
    case 'lt':
      return `${col} < ${bind(value)}`;
    case 'lte':
      return `${col} <= ${bind(value)}`;
    case 'exists':
      return value === false ? `${col} IS NULL` : `${col} IS NOT NULL`;
    case 'contains': {
      const values = Array.isArray(value) ? value : [value];
      if (values.length === 0) return '1=0';
      return dialect.jsonArrayHasAny(
        col,
        values.map((v) => dialect.bind(params, v)),
      );
    }
  }
}

/** Remembered id lists are the same array on every request: their JSON is made once. */
const jsonOfIds = new WeakMap<readonly string[], string>();
function idsJson(ids: readonly string[]): string {
  let json = jsonOfIds.get(ids);
  if (json === undefined) {
    json = JSON.stringify(ids);
    jsonOfIds.set(ids, json);
  }
  return json;
}

/** LIKE's wildcards and its escape character, taken literally. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}
