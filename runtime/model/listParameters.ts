/**
 * Every parameter of the list endpoint besides the entity's filters, spelled once: the runtime's
 * parser accepts exactly these, the generator refuses a filter named like one of them, and the
 * OpenAPI document lists them in this order.
 */
export const LIST_PARAMETERS = [
  'id',
  'q',
  'limit',
  'page',
  'skip',
  'offset',
  'cursor',
  'sort',
  'sortBy',
  'sortDir',
  'select',
  'includeArchived',
  'trash',
  'populate',
  'dateFrom',
  'dateTo',
  'dateMonth',
  'dateField',
] as const;

export type ListParameter = (typeof LIST_PARAMETERS)[number];

const NAMES: ReadonlySet<string> = new Set(LIST_PARAMETERS);

export function isListParameter(name: string): name is ListParameter {
  return NAMES.has(name);
}

/**
 * Parameters of GET /{plural}/aggregate besides the list's filtering ones (q, dates,
 * includeArchived) and the entity's filters; no filter may be named like one of them either.
 */
export const AGGREGATE_PARAMETERS = [
  'groupBy',
  'timeZone',
  'sum',
  'avg',
  'min',
  'max',
  'sort',
  'limit',
  'skip',
] as const;

/** The list parameters an aggregation takes too: what selects the records. */
export const AGGREGATE_FILTER_PARAMETERS = [
  'q',
  'includeArchived',
  'dateFrom',
  'dateTo',
  'dateMonth',
  'dateField',
] as const;

const AGGREGATE_NAMES: ReadonlySet<string> = new Set([...AGGREGATE_PARAMETERS, ...AGGREGATE_FILTER_PARAMETERS]);

export function isAggregateParameter(name: string): boolean {
  return AGGREGATE_NAMES.has(name);
}

/** A name no filter may take: a parameter of the list or of the aggregation. */
export function isReservedParameter(name: string): boolean {
  return NAMES.has(name) || AGGREGATE_NAMES.has(name);
}
