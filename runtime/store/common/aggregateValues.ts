import type { AggregateGroup, AggregateQuery, AggregateSort, Measure } from '../types.js';
import type { TableLayout } from './tableLayout.js';

/** The aggregated values of one group, by operation and field: numbers, or text for dates (min/max). */
export function aggregateValues(
  layout: TableLayout,
  measures: Measure[],
  read: (index: number) => unknown,
): AggregateGroup['values'] {
  const values: AggregateGroup['values'] = {};
  measures.forEach((measure, i) => {
    const raw = read(i);
    const text = layout.columns.get(measure.field)?.kind === 'text';
    const byField = values[measure.op] ?? {};
    byField[measure.field] = raw === null || raw === undefined ? null : text ? String(raw) : Number(raw);
    values[measure.op] = byField;
  });
  return values;
}

/** Which result column a sort names: the count, the i-th key, or the i-th measure (undefined: none asked). */
export function sortTarget(
  query: AggregateQuery,
  column: AggregateSort['column'],
): { count: true } | { key: number } | { measure: number } | undefined {
  if (column === 'count') return { count: true };
  if (column.startsWith('key.')) {
    const key = query.groupBy.findIndex((k) => k.field === column.slice(4));
    return key >= 0 ? { key } : undefined;
  }
  const [op, field] = column.split('.', 2);
  const measure = query.measures.findIndex((m) => m.op === op && m.field === field);
  return measure >= 0 ? { measure } : undefined;
}
