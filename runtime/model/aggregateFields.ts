import type { EntityModel, FieldModel } from './types.js';

// What GET /{plural}/aggregate may group and aggregate, spelled once for the parser and the
// OpenAPI document.

export const MAX_GROUP_KEYS = 3;
export const DEFAULT_GROUPS = 100;
export const MAX_GROUPS = 1000;
/** Aggregated values per request, over all of sum, avg, min and max. */
export const MAX_MEASURES = 20;

export const ACCUMULATORS = ['sum', 'avg', 'min', 'max'] as const;
export type AccumulatorName = (typeof ACCUMULATORS)[number];

const visible = (field: FieldModel) => !field.hidden && field.type !== 'encryptedKey';

/** Declared filters that are not arrays, and every date field (grouped by a bucket, by day without one). */
export function groupableFields(entity: EntityModel): FieldModel[] {
  return entity.fields.filter(
    (f) => visible(f) && (f.type === 'isoDate' || (entity.filters.includes(f.name) && f.type !== 'array')),
  );
}

/** Numbers for sum and avg; numbers and dates for min and max. */
export function measurableFields(entity: EntityModel, op: AccumulatorName): FieldModel[] {
  const types = op === 'min' || op === 'max' ? ['int', 'float', 'isoDate'] : ['int', 'float'];
  return entity.fields.filter((f) => visible(f) && types.includes(f.type));
}
