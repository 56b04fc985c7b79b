import type { FieldModel, FieldType } from './types.js';

/**
 * The comparison operators of list filters (`price[gt]=100`), spelled once: the runtime's parser
 * accepts exactly these per field type, and the OpenAPI document and the typed client list them.
 */
export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'exists',
  'contains',
  'startsWith',
] as const;

export type FilterOperator = (typeof FILTER_OPERATORS)[number];

const ORDERED: FilterOperator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists'];
const TEXT: FilterOperator[] = ['eq', 'ne', 'in', 'nin', 'exists', 'contains', 'startsWith'];
const CHOICE: FilterOperator[] = ['eq', 'ne', 'in', 'nin', 'exists'];

/** What each operator does, for the OpenAPI document and error messages. */
export const OPERATOR_MEANINGS: Record<FilterOperator, string> = {
  eq: 'equals the value',
  ne: 'differs from the value (records without one included)',
  gt: 'is greater than the value',
  gte: 'is greater than or equal to the value',
  lt: 'is less than the value',
  lte: 'is less than or equal to the value',
  in: 'is one of the values (comma-separated or repeated)',
  nin: 'is none of the values (records without one included)',
  exists: 'has a value (true) or has none (false)',
  contains: 'contains the text, ignoring case and accents',
  startsWith: 'starts with the text, ignoring case and accents',
};

/** The operators a filter on a field of this type takes. */
export function operatorsFor(field: Pick<FieldModel, 'type' | 'items'>): readonly FilterOperator[] {
  // An array filter asks about its elements: holds the value (eq), any of them (in), none (nin).
  if (field.type === 'array') return ['eq', 'in', 'nin'];
  return operatorsForType(field.type);
}

function operatorsForType(type: FieldType): readonly FilterOperator[] {
  switch (type) {
    case 'int':
    case 'float':
    case 'isoDate':
      return ORDERED;
    case 'string':
    case 'url':
      return TEXT;
    case 'enum':
    case 'objectId':
      return CHOICE;
    case 'boolean':
      return ['eq', 'ne', 'exists'];
    default:
      return ['exists'];
  }
}

/** Values one `in`/`nin` takes at most. */
export const MAX_FILTER_VALUES = 100;
