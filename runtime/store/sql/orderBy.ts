import type { Collation, FindQuery } from '../types.js';
import { ident, type Column, type TableLayout } from './tableLayout.js';

/**
 * ORDER BY of a find, shared by the SQL dialects: requested fields (natural-order keys for text,
 * or the dialect's explicit collation), then the id as the tie-breaker in the last direction.
 */
export function orderByClause(
  layout: TableLayout,
  query: FindQuery,
  collate: (column: Column, collation: Collation, direction: 'ASC' | 'DESC') => string,
  nulls: (direction: 'ASC' | 'DESC') => string = () => '',
): string {
  const parts: string[] = [];
  let idDirection: 'ASC' | 'DESC' = 'DESC';
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
        ? collate(column, query.collation, direction)
        : `${ident(column.sortKey ?? column.field)} ${direction}${nulls(direction)}`,
    );
    idDirection = direction;
  }
  parts.push(`"id" ${idDirection}`);
  return parts.join(', ');
}
