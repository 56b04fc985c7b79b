import { sortTarget } from '../common/aggregateValues.js';
import { normalizeSearch, searchTerms } from '../common/searchText.js';
import { foldText } from '../common/sortKey.js';
import { foldColumn, sortKeyColumn } from '../common/tableLayout.js';
import type { AggregateQuery, Collation, Condition, DateBucket, FindQuery, Where } from '../types.js';

/** What the Mongo adapter needs to know of a collection's fields. */
export interface MongoLayout {
  /** Text fields that carry a natural-order key beside them. */
  sortKeyFields: ReadonlySet<string>;
  /** Text fields that carry their folded text beside them (filters: contains, startsWith). */
  foldFields?: ReadonlySet<string>;
  /** Whether the collection has searchable fields (their normalized words kept in `_words`). */
  searchable: boolean;
}

export type MongoFilter = Record<string, unknown>;
/**
 * The normalized words of a document's search fields, under an ordinary multikey index: the
 * spec's search matches word prefixes, which an anchored regex answers from that index, while a
 * MongoDB text index matches whole words only.
 */
export const SEARCH_FIELD = '_words';
/** Matches no document: the translation of an empty `or` and of `in []`. */
const NOTHING: MongoFilter = { $expr: false };

const mongoField = (field: string) => (field === 'id' ? '_id' : field);

/** The IR as a MongoDB filter, with the same null and missing-field semantics as the SQL stores. */
export function toMongoFilter(where: Where | undefined, layout?: Pick<MongoLayout, 'foldFields'>): MongoFilter {
  if (!where) return {};
  if ('and' in where) return where.and.length === 0 ? {} : { $and: where.and.map((w) => toMongoFilter(w, layout)) };
  if ('or' in where) return where.or.length === 0 ? NOTHING : { $or: where.or.map((w) => toMongoFilter(w, layout)) };
  if ('not' in where) return negate(where.not, layout);
  if ('through' in where) throw new Error('a through condition reaches the MongoDB filter unsettled');
  return condition(where, layout?.foldFields ?? NO_FIELDS);
}

const NO_FIELDS: ReadonlySet<string> = new Set();

/**
 * NOT as SQL evaluates it: true only where the condition is false, never where it is unknown
 * because its field is null. Pushed down to the conditions (De Morgan holds in three-valued logic).
 */
function negate(where: Where, layout: Pick<MongoLayout, 'foldFields'> | undefined): MongoFilter {
  if ('and' in where) return where.and.length === 0 ? NOTHING : { $or: where.and.map((w) => negate(w, layout)) };
  if ('or' in where) return where.or.length === 0 ? {} : { $and: where.or.map((w) => negate(w, layout)) };
  if ('not' in where) return toMongoFilter(where.not, layout);
  if ('through' in where) throw new Error('a through condition reaches the MongoDB filter unsettled');
  return negatedCondition(where, layout?.foldFields ?? NO_FIELDS);
}

/** What a `textContains`/`textStartsWith` tests: the folded copy when kept, else the value, case-insensitively. */
function textTest(field: string, op: 'textContains' | 'textStartsWith', value: unknown, folded: ReadonlySet<string>) {
  const needle = foldText(String(value)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = op === 'textStartsWith' ? `^${needle}` : needle;
  return folded.has(field)
    ? { name: foldColumn(field), regex: new RegExp(pattern) }
    : { name: mongoField(field), regex: new RegExp(pattern, 'i') };
}

function negatedCondition({ field, op, value }: Condition, folded: ReadonlySet<string>): MongoFilter {
  const name = mongoField(field);
  const isNull = value === null || value === undefined;
  switch (op) {
    case 'eq':
      return isNull ? { [name]: { $ne: null } } : { [name]: { $nin: [null, value] } };
    case 'ne':
      return isNull ? { [name]: null } : { [name]: value };
    case 'in': {
      const values = value as unknown[];
      return values.length === 0
        ? {}
        : { [name]: { $nin: [...values.filter((v) => v !== null && v !== undefined), null] } };
    }
    case 'nin': {
      // NOT nin: the value is one of them (a missing one only when null is one of them).
      const values = value as unknown[];
      return values.length === 0 ? NOTHING : { [name]: { $in: values.map((v) => v ?? null) } };
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return { [name]: { $ne: null, $not: { [`$${op}`]: value } } };
    case 'exists':
      return value === false ? { [name]: { $ne: null } } : { [name]: null };
    case 'contains': {
      const values = Array.isArray(value) ? value : [value];
      return values.length === 0 ? {} : { [name]: { $nin: values } };
    }
    case 'textContains':
    case 'textStartsWith': {
      const test = textTest(field, op, value, folded);
      return { [test.name]: { $ne: null, $not: test.regex } };
    }
  }
}

function condition({ field, op, value }: Condition, folded: ReadonlySet<string>): MongoFilter {
  const name = mongoField(field);
  switch (op) {
    case 'eq':
      // `null` matches a missing field too, as SQL's NULL does.
      return { [name]: value ?? null };
    case 'ne':
      return value === null || value === undefined ? { [name]: { $ne: null } } : { [name]: { $ne: value } };
    case 'in': {
      const values = value as unknown[];
      return values.length === 0 ? NOTHING : { [name]: { $in: values.map((v) => v ?? null) } };
    }
    case 'nin': {
      // A missing value is none of the values, as SQL's `IS NULL OR NOT IN` (unless null is one of them).
      const values = value as unknown[];
      return values.length === 0 ? {} : { [name]: { $nin: values.map((v) => v ?? null) } };
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return { [name]: { [`$${op}`]: value } };
    case 'exists':
      return value === false ? { [name]: null } : { [name]: { $ne: null } };
    case 'contains': {
      const values = Array.isArray(value) ? value : [value];
      // On an array field, $in matches when any element is one of the values.
      return values.length === 0 ? NOTHING : { [name]: { $in: values } };
    }
    case 'textContains':
    case 'textStartsWith': {
      const test = textTest(field, op, value, folded);
      return { [test.name]: { $regex: test.regex } };
    }
  }
}

/** Every term must match as a word prefix in the normalized search text. */
export function toMongoTextFilter(text: string | undefined, layout: MongoLayout): MongoFilter | undefined {
  if (text === undefined) return undefined;
  if (!layout.searchable) return NOTHING;
  const terms = searchTerms(text).map(normalizeSearch);
  if (terms.length === 0) return undefined;
  return {
    $and: terms.map((term) => ({ [SEARCH_FIELD]: { $regex: `^${term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}` } })),
  };
}

/**
 * The sort: requested fields (text through its natural-order key, unless an explicit collation
 * applies, which MongoDB then uses natively), then _id as the tie-breaker in the last direction.
 */
export function toMongoSort(query: FindQuery, layout: MongoLayout): [string, 1 | -1][] {
  const sort: [string, 1 | -1][] = [];
  let idDirection: 1 | -1 = -1;
  for (const key of query.sort ?? []) {
    const direction = key.direction === 'asc' ? 1 : -1;
    if (key.field === 'id') {
      idDirection = direction;
      break;
    }
    const natural = layout.sortKeyFields.has(key.field) && !query.collation;
    sort.push([natural ? sortKeyColumn(key.field) : key.field, direction]);
    idDirection = direction;
  }
  sort.push(['_id', idDirection]);
  return sort;
}

/** An explicit collation in MongoDB's own terms (strength 3 when none is given). */
export function toMongoCollation(
  collation: Collation | undefined,
): { locale: string; strength: number; numericOrdering: boolean } | undefined {
  if (!collation) return undefined;
  return {
    locale: collation.locale,
    strength: collation.strength ?? 3,
    numericOrdering: collation.numericOrdering ?? false,
  };
}

const DAY_MS = 86_400_000;

/**
 * The start of a date bucket as `YYYY-MM-DD`, from the stored UTC timestamp text: the local
 * calendar date first (`$dateToString` in the zone), then the unit's first day computed on that
 * date alone, so a daylight-saving change inside a week cannot move its Monday.
 */
export function toMongoDateBucket(field: string, bucket: DateBucket, timeZone: string): unknown {
  const local = {
    $dateToString: {
      date: { $dateFromString: { dateString: `$${field}` } },
      format: '%Y-%m-%d',
      // The Olson name: MongoDB knows both spellings, not every implementation of its language does.
      timezone: timeZone === 'UTC' ? 'Etc/UTC' : timeZone,
    },
  };
  const day = { $dateFromString: { dateString: '$$d', format: '%Y-%m-%d' } };
  const start =
    bucket === 'day'
      ? '$$d'
      : bucket === 'month'
        ? { $concat: [{ $substrCP: ['$$d', 0, 8] }, '01'] }
        : bucket === 'year'
          ? { $concat: [{ $substrCP: ['$$d', 0, 5] }, '01-01'] }
          : {
              $dateToString: {
                format: '%Y-%m-%d',
                date: { $subtract: [day, { $multiply: [{ $subtract: [{ $isoDayOfWeek: day }, 1] }, DAY_MS] }] },
              },
            };
  return {
    $cond: [{ $eq: [{ $type: `$${field}` }, 'string'] }, { $let: { vars: { d: local }, in: start } }, null],
  };
}

/**
 * An aggregation as a pipeline: match, group (missing values grouped as null, like SQL's
 * NULL), then one facet for the page in the asked order and one for the number of groups.
 */
export function toMongoAggregate(query: AggregateQuery, filter: MongoFilter): Record<string, unknown>[] {
  const keys = query.groupBy.map((key, i) => [
    `g${i}`,
    key.bucket
      ? toMongoDateBucket(mongoField(key.field), key.bucket, query.timeZone)
      : { $ifNull: [`$${mongoField(key.field)}`, null] },
  ]);
  const group: Record<string, unknown> = {
    _id: keys.length > 0 ? Object.fromEntries(keys) : null,
    c: { $sum: 1 },
  };
  query.measures.forEach((measure, i) => {
    group[`m${i}`] = { [`$${measure.op}`]: `$${mongoField(measure.field)}` };
  });
  const sort: Record<string, 1 | -1> = {};
  for (const { column, direction } of query.sort) {
    const order = direction === 'asc' ? 1 : -1;
    const target = sortTarget(query, column);
    const path = !target
      ? undefined
      : 'count' in target
        ? 'c'
        : 'key' in target
          ? `_id.g${target.key}`
          : `m${target.measure}`;
    if (path && !(path in sort)) sort[path] = order;
  }
  query.groupBy.forEach((_, i) => {
    if (!(`_id.g${i}` in sort)) sort[`_id.g${i}`] = 1;
  });
  const page: Record<string, unknown>[] = [];
  if (Object.keys(sort).length > 0) page.push({ $sort: sort });
  if (query.skip > 0) page.push({ $skip: query.skip });
  page.push({ $limit: query.limit });
  return [
    ...(Object.keys(filter).length > 0 ? [{ $match: filter }] : []),
    { $group: group },
    { $facet: { page, total: [{ $count: 'n' }] } },
  ];
}
