import type { Condition, Where } from '../types.js';
import { foldText } from './sortKey.js';

/**
 * The IR evaluated against one document in memory, where no table row is at hand to query: the
 * history of a deleted record (readable to whoever could view its last snapshot), the records of
 * realtime events, and the records a write adds to a remembered aggregation.
 */
export function matchesWhere(doc: Record<string, unknown>, where: Where | undefined): boolean {
  if (!where) return true;
  if ('and' in where) return where.and.every((w) => matchesWhere(doc, w));
  if ('or' in where) return where.or.some((w) => matchesWhere(doc, w));
  if ('not' in where) return !matchesWhere(doc, where.not);
  // A condition through a reference needs the store: settleThrough() answers it first.
  if ('through' in where) throw new Error(`a condition through ${where.through.field} was not settled`);
  return matchesCondition(doc[where.field], where);
}

function matchesCondition(value: unknown, { op, value: expected }: Condition): boolean {
  const present = value !== null && value !== undefined;
  switch (op) {
    case 'eq':
      return expected === null || expected === undefined ? !present : value === expected;
    case 'ne':
      return expected === null || expected === undefined ? present : value !== expected;
    case 'in':
      return (expected as unknown[]).some((e) => (e === null ? !present : e === value));
    case 'gt':
      return present && (value as number) > (expected as number);
    case 'gte':
      return present && (value as number) >= (expected as number);
    case 'lt':
      return present && (value as number) < (expected as number);
    case 'lte':
      return present && (value as number) <= (expected as number);
    case 'exists':
      return expected === false ? !present : present;
    case 'nin':
      return !(expected as unknown[]).some((e) => (e === null ? !present : e === value));
    case 'contains': {
      const wanted = Array.isArray(expected) ? expected : [expected];
      return Array.isArray(value) && value.some((v) => wanted.includes(v));
    }
    case 'textContains':
      return typeof value === 'string' && foldText(value).includes(foldText(String(expected)));
    case 'textStartsWith':
      return typeof value === 'string' && foldText(value).startsWith(foldText(String(expected)));
  }
}
