import type { AggregateGroup, AggregateQuery, AggregateResult, Condition, Doc, Where } from '../types.js';
import { sortTarget } from './aggregateValues.js';
import { matchesWhere } from './matchesWhere.js';

/**
 * An aggregation's result with `inserted` records added, exactly as the store would answer it
 * after the insert; undefined when that cannot be told for certain in memory, and the store must
 * be asked again. Certain means: every group is in the result (no skip, no page cut off), no
 * record starts a new group, the keys are plain fields, the measures are sums of whole numbers
 * (exact in a double, as in the database) or minima and maxima of numbers, the filter is one
 * the store evaluates as matchesWhere does, and an order by values has no ties to break.
 */
export function foldInserted(
  query: AggregateQuery,
  result: AggregateResult,
  inserted: readonly Doc[],
): AggregateResult | undefined {
  if (query.text !== undefined || query.skip !== 0 || result.groups.length !== result.totalGroups) return undefined;
  if (query.groupBy.some((key) => key.bucket !== undefined) || !foldableWhere(query.where)) return undefined;
  if (query.measures.some((m) => m.op === 'avg')) return undefined;
  const groups = result.groups.map((group) => ({
    ...group,
    values: Object.fromEntries(Object.entries(group.values).map(([op, byField]) => [op, { ...byField }])),
  })) as AggregateGroup[];
  let changed = false;
  for (const doc of inserted) {
    if (!comparableDoc(doc, query.where)) return undefined;
    if (!matchesWhere(doc, query.where)) continue;
    const key = query.groupBy.map(({ field }) => doc[field] ?? null);
    if (key.some((value) => typeof value === 'object' && value !== null)) return undefined;
    const group = groups.find((g) => query.groupBy.every(({ field }, i) => (g.key[field] ?? null) === key[i]));
    if (!group) return undefined;
    group.count++;
    for (const { op, field } of query.measures) {
      const byField = group.values[op];
      if (!byField) return undefined;
      const value = doc[field] ?? null;
      const current = byField[field] ?? null;
      if (value === null) continue;
      if (typeof value !== 'number' || (current !== null && typeof current !== 'number')) return undefined;
      if (op === 'sum') {
        const sum = (current ?? 0) + value;
        if (!Number.isSafeInteger(value) || !Number.isSafeInteger(sum)) return undefined;
        byField[field] = sum;
      } else if (current === null || (op === 'min' ? value < current : value > current)) byField[field] = value;
    }
    changed = true;
  }
  if (!changed) return result;
  const ordered = reorder(query, groups);
  return ordered && { groups: ordered, totalGroups: result.totalGroups };
}

/**
 * The groups in the query's order after their values changed. An order by keys alone (or none)
 * is unchanged, since no group was added. An order by counts or measures is settled here only
 * when it compares numbers without a tie (ties fall to the keys, in the store's collation).
 */
function reorder(query: AggregateQuery, groups: AggregateGroup[]): AggregateGroup[] | undefined {
  const targets = query.sort.map((sort) => sortTarget(query, sort.column));
  if (targets.every((target) => target === undefined || 'key' in target)) return groups;
  const columns: { read: (group: AggregateGroup) => unknown; descending: boolean }[] = [];
  for (const [i, target] of targets.entries()) {
    if (target === undefined || 'key' in target) return undefined;
    const descending = query.sort[i].direction === 'desc';
    if ('count' in target) columns.push({ read: (group) => group.count, descending });
    else {
      const { op, field } = query.measures[target.measure];
      columns.push({ read: (group) => group.values[op]?.[field] ?? null, descending });
    }
  }
  let settled = true;
  const sorted = [...groups].sort((a, b) => {
    for (const { read, descending } of columns) {
      const [x, y] = [read(a), read(b)];
      if (typeof x !== 'number' || typeof y !== 'number') settled = false;
      else if (x !== y) return descending ? y - x : x - y;
    }
    settled = false; // a tie (or a null) is broken by rules of the store's own
    return 0;
  });
  return settled ? sorted : undefined;
}

/** Whether the store answers `where` as matchesWhere does: no rule through a reference, no folded text. */
function foldableWhere(where: Where | undefined): boolean {
  if (!where) return true;
  if ('and' in where) return where.and.every(foldableWhere);
  if ('or' in where) return where.or.every(foldableWhere);
  if ('not' in where) return foldableWhere(where.not);
  if ('through' in where) return false;
  if (where.op === 'textContains' || where.op === 'textStartsWith') return false;
  return !isRange(where) || typeof where.value === 'number' || isAscii(where.value);
}

/**
 * Whether the record's values compare in memory as in the store: text compared by a range
 * condition must be ASCII (JavaScript orders UTF-16 units, the stores code points).
 */
function comparableDoc(doc: Doc, where: Where | undefined): boolean {
  if (!where) return true;
  if ('and' in where) return where.and.every((w) => comparableDoc(doc, w));
  if ('or' in where) return where.or.every((w) => comparableDoc(doc, w));
  if ('not' in where) return comparableDoc(doc, where.not);
  if ('through' in where || !isRange(where)) return true;
  const value = doc[where.field];
  return typeof value !== 'string' || isAscii(value);
}

const isRange = (condition: Condition) =>
  condition.op === 'gt' || condition.op === 'gte' || condition.op === 'lt' || condition.op === 'lte';
// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range is the point
const isAscii = (value: unknown) => typeof value === 'string' && /^[\x00-\x7f]*$/.test(value);
