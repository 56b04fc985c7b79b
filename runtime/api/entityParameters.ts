import {
  type ACCUMULATORS,
  DEFAULT_GROUPS,
  groupableFields,
  MAX_GROUP_KEYS,
  MAX_GROUPS,
  measurableFields,
} from '../model/aggregateFields.js';
import { operatorsFor } from '../model/filterOperators.js';
import { AGGREGATE_FILTER_PARAMETERS, LIST_PARAMETERS } from '../model/listParameters.js';
import type { EntityModel, FieldModel } from '../model/types.js';
import type { JsonSchema } from '../model/valueSchema.js';

// The documented parameters of the two query grammars an entity's routes read with parsers of their
// own (runtime/query/parseListQuery.ts, parseAggregateQuery.ts): the list's and the aggregation's.

const parameterRef = (name: string): JsonSchema => ({ $ref: `#/components/parameters/${name}` });

/** The `$ref`s of an entity's filter parameters (`<plural>.<field>`, `<plural>.<field>.<op>`). */
const filterRefs = new WeakMap<EntityModel, JsonSchema[]>();

/**
 * The names of an entity's filter parameter components: one per filter and one per operator it
 * takes (generator/emit/openapi/ writes the components under these names).
 */
export function filterParameterNames(entity: EntityModel): string[] {
  return entity.filters.flatMap((name) => {
    const field = entity.fields.find((f) => f.name === name)!;
    return [`${entity.plural}.${name}`, ...operatorsFor(field).map((op) => `${entity.plural}.${name}.${op}`)];
  });
}

function filterReferences(entity: EntityModel): JsonSchema[] {
  let refs = filterRefs.get(entity);
  if (!refs) {
    refs = filterParameterNames(entity).map(parameterRef);
    filterRefs.set(entity, refs);
  }
  return refs;
}

/** The list's parameters (`trash` only where the entity keeps one), then its filters. */
export function listGrammar(entity: EntityModel): JsonSchema[] {
  return [
    ...LIST_PARAMETERS.filter((p) => p !== 'trash' || entity.trash).map(parameterRef),
    ...filterReferences(entity),
  ];
}

/** The aggregation's parameters: grouping, measures, sort and page, then the list's filters. */
export function aggregateGrammar(entity: EntityModel): JsonSchema[] {
  const names = (fields: FieldModel[]) => fields.map((f) => f.name).join(', ') || 'none';
  const dates = groupableFields(entity).filter((f) => f.type === 'isoDate');
  const measure = (op: (typeof ACCUMULATORS)[number], meaning: string) => ({
    name: op,
    in: 'query',
    description: `${meaning} of these fields per group, comma-separated (${names(measurableFields(entity, op))})`,
    schema: { type: 'string' },
  });
  return [
    {
      name: 'groupBy',
      in: 'query',
      description: `Up to ${MAX_GROUP_KEYS} fields, comma-separated: ${names(groupableFields(entity).filter((f) => f.type !== 'isoDate'))}; a date field with a bucket: ${dates.map((f) => `${f.name}:day|week|month|year`).join(', ') || 'none'}. Without groupBy: one group of every record.`,
      schema: { type: 'string' },
      ...(dates.length > 0 ? { example: `${dates[0].name}:month` } : {}),
    },
    {
      name: 'timeZone',
      in: 'query',
      description: 'IANA time zone the date buckets are computed in (default UTC)',
      schema: { type: 'string', default: 'UTC' },
    },
    measure('sum', 'Sum (0 when no record has a value)'),
    measure('avg', 'Average'),
    measure('min', 'Minimum'),
    measure('max', 'Maximum'),
    {
      name: 'sort',
      in: 'query',
      description:
        'Result columns, comma-separated, `-` for descending: count, a groupBy field, or sum.<field>, avg.<field>, min.<field>, max.<field>. Default: the groupBy fields ascending.',
      schema: { type: 'string' },
    },
    {
      name: 'limit',
      in: 'query',
      description: 'Groups per answer',
      schema: { type: 'integer', minimum: 1, maximum: MAX_GROUPS, default: DEFAULT_GROUPS },
    },
    { name: 'skip', in: 'query', description: 'Groups to skip', schema: { type: 'integer', minimum: 0 } },
    ...AGGREGATE_FILTER_PARAMETERS.map(parameterRef),
    ...filterReferences(entity),
  ];
}
