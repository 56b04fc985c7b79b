import { newDetails, validationError } from '../errors/apiError.js';
import {
  ACCUMULATORS,
  DEFAULT_GROUPS,
  groupableFields,
  MAX_GROUP_KEYS,
  MAX_GROUPS,
  MAX_MEASURES,
} from '../model/aggregateFields.js';
import { isAggregateParameter } from '../model/listParameters.js';
import type { EntityModel, FieldModel } from '../model/types.js';
import { isTimeZone } from '../store/common/dateBucket.js';
import {
  type Accumulator,
  type AggregateSort,
  DATE_BUCKETS,
  type DateBucket,
  type GroupKey,
  type Measure,
  type Where,
} from '../store/types.js';
import { type Fail, integer, parseConditions, single } from './parseListQuery.js';

const NUMERIC = new Set(['int', 'float']);

/** An aggregation request after parsing: every name checked against the entity. */
export interface AggregateRequest {
  text?: string;
  where: Where[];
  includeArchived: boolean;
  groupBy: GroupKey[];
  timeZone: string;
  measures: Measure[];
  sort: AggregateSort[];
  limit: number;
  skip: number;
}

type Raw = Record<string, unknown>;

/**
 * The query string of GET /{plural}/aggregate, as strictly as the list's: `groupBy=status,createdAt:month`,
 * `sum=total,quantity`, `avg=`, `min=`, `max=`, `timeZone=Europe/Berlin`, `sort=-count,status`,
 * `limit`, `skip`, plus the list's filters, `q`, date range and `includeArchived`.
 */
export function parseAggregateQuery(entity: EntityModel, raw: Raw, unseen?: ReadonlySet<string>): AggregateRequest {
  const errors = newDetails();
  const fail: Fail = (key, message) => {
    if (!(key in errors)) errors[key] = message;
    return undefined;
  };
  for (const key of Object.keys(raw)) {
    if (!isAggregateParameter(key) && (!entity.filters.includes(key) || unseen?.has(key)))
      fail(key, 'is not a known query parameter');
  }
  // Fields the caller may not see on every record are unknown here: a group or a measure would tell their values.
  const visible = new Map(entity.fields.filter((f) => !f.hidden && !unseen?.has(f.name)).map((f) => [f.name, f]));
  const { text, where, includeArchived } = parseConditions(entity, raw, visible, fail);

  const groupBy: GroupKey[] = [];
  const names = list(raw, 'groupBy', fail);
  if (names.length > MAX_GROUP_KEYS) fail('groupBy', `must name at most ${MAX_GROUP_KEYS} fields`);
  for (const name of names.slice(0, MAX_GROUP_KEYS)) {
    const key = groupKey(entity, visible, name);
    if (typeof key === 'string') fail('groupBy', key);
    else if (groupBy.some((k) => k.field === key.field)) fail('groupBy', `names ${key.field} twice`);
    else groupBy.push(key);
  }
  const timeZone = single(raw, 'timeZone', fail) ?? 'UTC';
  if (!isTimeZone(timeZone)) fail('timeZone', 'must be an IANA time zone such as Europe/Berlin, or UTC');

  const measures: Measure[] = [];
  for (const op of ACCUMULATORS) {
    for (const name of list(raw, op, fail)) {
      const problem = measureProblem(visible.get(name), name, op);
      if (problem) fail(op, problem);
      else if (!measures.some((m) => m.op === op && m.field === name)) measures.push({ op, field: name });
    }
  }
  if (measures.length > MAX_MEASURES) fail('sum', `at most ${MAX_MEASURES} values may be aggregated at once`);

  const sort: AggregateSort[] = [];
  for (const part of list(raw, 'sort', fail)) {
    const direction = part.startsWith('-') ? 'desc' : 'asc';
    const name = part.replace(/^[-+]/, '');
    const column = sortColumn(name, groupBy, measures);
    if (!column) {
      fail(
        'sort',
        `"${name}" is not a result column; sort by count, a groupBy field, or an aggregated value such as sum.total`,
      );
    } else sort.push({ column, direction });
  }
  const limit = integer(raw, 'limit', 1, MAX_GROUPS, fail) ?? DEFAULT_GROUPS;
  const skip = integer(raw, 'skip', 0, Number.MAX_SAFE_INTEGER, fail) ?? 0;

  if (Object.keys(errors).length > 0) throw validationError(errors, 'Invalid query parameters');
  return {
    ...(text !== undefined ? { text } : {}),
    where,
    includeArchived,
    groupBy,
    timeZone,
    measures,
    sort,
    limit,
    skip,
  };
}

/** Comma-separated names, or the parameter repeated. */
function list(raw: Raw, key: string, fail: Fail): string[] {
  const value = raw[key];
  if (value === undefined) return [];
  const parts = Array.isArray(value) ? value : [value];
  if (!parts.every((part) => typeof part === 'string')) {
    fail(key, 'must be names, comma-separated or repeated');
    return [];
  }
  const names = (parts as string[])
    .flatMap((part) => part.split(','))
    .map((part) => part.trim())
    .filter(Boolean);
  if (names.length === 0) fail(key, 'must name at least one field');
  return names;
}

/** `status` (a declared filter) or `createdAt:month` (any date field, bucketed); otherwise why not. */
function groupKey(entity: EntityModel, visible: Map<string, FieldModel>, spec: string): GroupKey | string {
  const [name, bucket, extra] = spec.split(':');
  const field = visible.get(name);
  if (!field) return `unknown field "${name}"`;
  if (field.type === 'encryptedKey') return `"${name}" is encrypted and cannot be grouped`;
  if (bucket !== undefined || extra !== undefined) {
    if (field.type !== 'isoDate') return `"${name}" is not a date field, so it has no ${bucket} buckets`;
    if (extra !== undefined || !(DATE_BUCKETS as readonly string[]).includes(bucket))
      return `"${spec}": a date field is bucketed by ${DATE_BUCKETS.join(', ')} (createdAt:month)`;
    return { field: name, bucket: bucket as DateBucket };
  }
  if (field.type === 'isoDate') return { field: name, bucket: 'day' };
  if (!entity.filters.includes(name))
    return `"${name}" is not a filter of ${entity.plural}; it groups by ${groupable(entity)}`;
  if (field.type === 'array') return `"${name}" is an array and cannot be grouped`;
  return { field: name };
}

function groupable(entity: EntityModel): string {
  return groupableFields(entity)
    .map((f) => (f.type === 'isoDate' ? `${f.name}:month` : f.name))
    .join(', ');
}

function measureProblem(field: FieldModel | undefined, name: string, op: Accumulator): string | undefined {
  if (!field) return `unknown field "${name}"`;
  if (field.type === 'encryptedKey') return `"${name}" is encrypted and cannot be aggregated`;
  if (NUMERIC.has(field.type)) return undefined;
  if ((op === 'min' || op === 'max') && field.type === 'isoDate') return undefined;
  return op === 'min' || op === 'max'
    ? `"${name}" is not a number or date field`
    : `"${name}" is not a number field (int or float)`;
}

function sortColumn(name: string, groupBy: GroupKey[], measures: Measure[]): AggregateSort['column'] | undefined {
  if (name === 'count') return 'count';
  const key = name.startsWith('key.') ? name.slice(4) : name;
  if (groupBy.some((k) => k.field === key)) return `key.${key}`;
  const [op, field] = name.split('.', 2);
  if (measures.some((m) => m.op === op && m.field === field)) return `${op as Accumulator}.${field}`;
  return undefined;
}
