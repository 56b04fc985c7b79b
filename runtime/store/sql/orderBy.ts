import type { TableLayout } from '../common/tableLayout.js';
import type { FindQuery } from '../types.js';
import type { Direction, SqlDialect } from './dialect.js';
import { ident } from './ident.js';

/**
 * ORDER BY of a find: requested fields (natural-order keys for text, or the dialect's explicit
 * collation), then the id as the tie-breaker in the last direction.
 */
export function orderByClause(layout: TableLayout, query: FindQuery, dialect: SqlDialect, params: unknown[]): string {
  const parts: string[] = [];
  let idDirection: Direction = 'DESC';
  for (const key of query.sort ?? []) {
    const direction = key.direction === 'asc' ? 'ASC' : 'DESC';
    if (key.field === 'id') {
      idDirection = direction;
      break;
    }
    const column = layout.columns.get(key.field);
    if (!column) continue;
    parts.push(
      query.collation && column.kind === 'text'
        ? dialect.collate(column, query.collation, direction, params)
        : `${ident(column.sortKey ?? column.field)} ${direction}${dialect.nulls(direction)}`,
    );
    idDirection = direction;
  }
  parts.push(`"id" ${idDirection}`);
  return parts.join(', ');
}
