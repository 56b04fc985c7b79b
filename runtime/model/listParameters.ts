/**
 * Every parameter of the list endpoint besides the entity's filters, spelled once: the runtime's
 * parser accepts exactly these, the generator refuses a filter named like one of them, and the
 * OpenAPI document lists them in this order.
 */
export const LIST_PARAMETERS = [
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
