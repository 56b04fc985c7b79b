import { newDetails, validationError } from '../errors/apiError.js';
import { FILTER_OPERATORS, type FilterOperator, MAX_FILTER_VALUES, operatorsFor } from '../model/filterOperators.js';
import { isListParameter } from '../model/listParameters.js';
import { parseIsoDate } from '../model/parseIsoDate.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { EntityModel, FieldModel } from '../model/types.js';
import type { Collation, SortKey, Where } from '../store/types.js';
import {
  type CursorPosition,
  DEFAULT_PAGE_SIZE,
  type ListQuery,
  MAX_PAGE_SIZE,
  MAX_QUERY_TEXT,
  type TrashView,
} from './listQuery.js';
import { parsePopulate } from './parsePopulate.js';

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
const INTEGER = /^-?\d+$/;
/** Characters of a `contains` or `startsWith` value at most. */
const MAX_TEXT_FILTER = 200;
const SORTABLE_TYPES = new Set(['string', 'url', 'enum', 'int', 'float', 'boolean', 'isoDate', 'objectId']);

type Raw = Record<string, unknown>;

export interface ParseOptions {
  /** Opens a cursor string; undefined when it is not one of ours. */
  openCursor(cursor: string): CursorPosition | undefined;
  /** Referenced entities, to follow dotted populate paths. */
  entity(plural: string): EntityModel | undefined;
  /**
   * Fields the caller may not see on every record (fieldView's `unseen`): as unknown as a field
   * that does not exist, to filter, sort, select or search by.
   */
  unseen?: ReadonlySet<string>;
}

/** The query string of GET /{plural}, strictly: anything unknown or malformed is a 400 naming the parameter. */
export function parseListQuery(entity: EntityModel, raw: Raw, options: ParseOptions): ListQuery {
  const errors = newDetails();
  const fail = (key: string, message: string) => {
    if (!(key in errors)) errors[key] = message;
    return undefined;
  };
  const unseen = options.unseen;
  const fields = new Map(entity.fields.filter((f) => !f.hidden && !unseen?.has(f.name)).map((f) => [f.name, f]));

  for (const key of Object.keys(raw)) {
    if (!isListParameter(key) && (!entity.filters.includes(key) || unseen?.has(key)))
      fail(key, 'is not a known query parameter');
  }
  const limit = integer(raw, 'limit', 1, MAX_PAGE_SIZE, fail) ?? DEFAULT_PAGE_SIZE;
  const page = integer(raw, 'page', 1, Number.MAX_SAFE_INTEGER, fail);
  const skip = integer(raw, 'skip', 0, Number.MAX_SAFE_INTEGER, fail);
  const offset = integer(raw, 'offset', 0, Number.MAX_SAFE_INTEGER, fail);
  const offsets = [page !== undefined && 'page', skip !== undefined && 'skip', offset !== undefined && 'offset'].filter(
    Boolean,
  );
  if (offsets.length > 1) fail(offsets[1] as string, `cannot be combined with ${offsets[0]}`);

  const { sort, collation, idDirection } = parseSort(raw, fields, fail, unseen);
  const cursorText = single(raw, 'cursor', fail);
  let position: CursorPosition | undefined;
  if (cursorText !== undefined) {
    if (offsets.length > 0) fail('cursor', `cannot be combined with ${offsets[0]}`);
    if (sort) fail('cursor', 'cannot be combined with a custom sort');
    position = options.openCursor(cursorText);
    if (!position) fail('cursor', 'is not a valid cursor');
  }

  const { text, where, includeArchived } = parseConditions(entity, raw, fields, fail);
  const select = parseSelect(raw, fields, fail);
  const trash = parseTrash(entity, raw, fail);
  const populate = raw.populate === undefined ? undefined : parsePopulate(entity, raw.populate, fail, options.entity);

  if (Object.keys(errors).length > 0) throw validationError(errors, 'Invalid query parameters');
  return {
    ...(text !== undefined ? { text } : {}),
    limit,
    skip: page !== undefined ? (page - 1) * limit : (skip ?? offset ?? 0),
    ...(position ? { after: position.after } : {}),
    idDirection: position?.direction ?? idDirection,
    ...(sort ? { sort } : {}),
    ...(collation ? { collation } : {}),
    ...(select ? { select } : {}),
    includeArchived,
    ...(trash ? { trash } : {}),
    ...(populate ? { populate } : {}),
    where,
  };
}

export type Fail = (key: string, message: string) => undefined;

/** `trash=only|include`, for an entity that keeps a trash. */
function parseTrash(entity: EntityModel, raw: Raw, fail: Fail): TrashView | undefined {
  const value = single(raw, 'trash', fail);
  if (value === undefined) return undefined;
  if (!entity.trash) return fail('trash', `${entity.plural} keep no trash`);
  if (value !== 'only' && value !== 'include') return fail('trash', 'must be only or include');
  return value;
}

/** What selects the records of a list or an aggregation: date range, filters and their operators, archived or not. */
export function parseConditions(
  entity: EntityModel,
  raw: Raw,
  fields: Map<string, FieldModel>,
  fail: Fail,
): { text?: string; where: Where[]; includeArchived: boolean } {
  let text = single(raw, 'q', fail);
  if (text !== undefined && text.length > MAX_QUERY_TEXT) fail('q', `must be at most ${MAX_QUERY_TEXT} characters`);
  if (text?.trim() === '') text = undefined;
  const where: Where[] = [];
  parseIds(raw, where, fail);
  parseDates(raw, fields, where, fail);
  parseFilters(entity, raw, fields, where, fail);
  return {
    ...(text !== undefined ? { text } : {}),
    where,
    includeArchived: boolean(raw, 'includeArchived', fail) ?? false,
  };
}

/**
 * `id=a,b,c` (or repeated, or `id[in]=a,b,c`): the records with these ids, at most MAX_FILTER_VALUES; what a client
 * showing references asks for, to label many at once. The access rules apply as to any list.
 */
function parseIds(raw: Raw, where: Where[], fail: Fail): void {
  let given = raw.id;
  if (given === undefined) return;
  // id[in]=a,b as the filters spell a list of values.
  if (given !== null && typeof given === 'object' && !Array.isArray(given) && Object.keys(given).join() === 'in')
    given = (given as Raw).in;
  const parts = Array.isArray(given) ? given : [given];
  if (!parts.every((part) => typeof part === 'string')) {
    fail('id', 'must be ids, comma-separated or repeated');
    return;
  }
  const ids = [...new Set((parts as string[]).flatMap((part) => part.split(',')).map((id) => id.trim()))];
  if (ids.length > MAX_FILTER_VALUES) {
    fail('id', `must be at most ${MAX_FILTER_VALUES} ids`);
    return;
  }
  const wrong = ids.find((id) => !OBJECT_ID.test(id));
  if (wrong !== undefined) {
    fail('id', `"${wrong.slice(0, 40)}" is not an id of 24 hexadecimal characters`);
    return;
  }
  where.push(ids.length === 1 ? { field: 'id', op: 'eq', value: ids[0] } : { field: 'id', op: 'in', value: ids });
}

/** One string value; repeated parameters and bracket objects are errors. */
export function single(raw: Raw, key: string, fail: Fail): string | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return fail(key, 'must be given once, as a string');
  return value;
}

export function integer(raw: Raw, key: string, min: number, max: number, fail: Fail): number | undefined {
  const value = single(raw, key, fail);
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!INTEGER.test(value) || number < min || number > max) {
    return fail(
      key,
      max === Number.MAX_SAFE_INTEGER ? `must be an integer >= ${min}` : `must be an integer from ${min} to ${max}`,
    );
  }
  return number;
}

function boolean(raw: Raw, key: string, fail: Fail): boolean | undefined {
  const value = single(raw, key, fail);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') return fail(key, 'must be true or false');
  return value === 'true';
}

function direction(value: unknown, key: string, fail: Fail): 'asc' | 'desc' | undefined {
  if (value === undefined) return undefined;
  if (value !== 'asc' && value !== 'desc') return fail(key, 'must be asc or desc');
  return value;
}

/** A sort field the entity cannot order by falls back to id, keeping the requested direction. */
function parseSort(raw: Raw, fields: Map<string, FieldModel>, fail: Fail, unseen?: ReadonlySet<string>) {
  const requested: { field: string; direction: 'asc' | 'desc' }[] = [];
  let collation: Collation | undefined;
  if (raw.sort !== undefined && (raw.sortBy !== undefined || raw.sortDir !== undefined))
    fail('sortBy', 'cannot be combined with sort');
  if (typeof raw.sort === 'string') {
    for (const part of raw.sort
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      requested.push(
        part.startsWith('-')
          ? { field: part.slice(1), direction: 'desc' }
          : { field: part.replace(/^\+/, ''), direction: 'asc' },
      );
    }
    if (requested.length === 0) fail('sort', 'must name a field');
  } else if (raw.sort !== undefined) {
    const object = raw.sort as Raw;
    if (Array.isArray(object) || typeof object !== 'object') fail('sort', 'must be given once');
    else {
      for (const key of Object.keys(object))
        if (!['field', 'direction', 'collation'].includes(key)) fail(`sort.${key}`, 'is not a known sort option');
      const field =
        typeof object.field === 'string' && object.field ? object.field : fail('sort.field', 'must name a field');
      const dir = direction(object.direction ?? 'asc', 'sort.direction', fail);
      if (field && dir) requested.push({ field, direction: dir });
      if (object.collation !== undefined) collation = parseCollation(object.collation, fail);
    }
  } else if (raw.sortBy !== undefined || raw.sortDir !== undefined) {
    const field = single(raw, 'sortBy', fail) ?? 'id';
    const dir = direction(single(raw, 'sortDir', fail) ?? 'asc', 'sortDir', fail);
    if (dir) requested.push({ field, direction: dir });
  }
  const sort: SortKey[] = [];
  let idDirection: 'asc' | 'desc' = 'desc';
  for (const key of requested) {
    // An order by a field the caller may not see would tell its values: refused, not ignored.
    if (unseen?.has(key.field)) {
      fail(raw.sort !== undefined ? 'sort' : 'sortBy', `unknown field "${key.field}"`);
      break;
    }
    const field = fields.get(key.field);
    const sortable = key.field !== 'id' && field && SORTABLE_TYPES.has(field.type);
    if (!sortable) {
      idDirection = key.direction;
      break;
    }
    sort.push({ field: key.field, direction: key.direction });
  }
  return { sort: sort.length > 0 ? sort : undefined, collation, idDirection };
}

function parseCollation(value: unknown, fail: Fail): Collation | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return fail('sort.collation', 'must be an object');
  const object = value as Raw;
  for (const key of Object.keys(object)) {
    if (!['locale', 'strength', 'numericOrdering'].includes(key))
      fail(`sort.collation.${key}`, 'is not a known collation option');
  }
  // Each option is checked on its own, so every problem is reported under its own name.
  let ok = true;
  const bad = (key: string, message: string) => {
    ok = false;
    return fail(`sort.collation.${key}`, message);
  };
  const locale = collatableLocale(object.locale);
  if (!locale)
    bad(
      'locale',
      object.locale === undefined
        ? 'is required with the other collation options: a locale such as en or de-DE'
        : 'must be a locale such as en or de-DE',
    );
  if (object.strength !== undefined && !['1', '2', '3'].includes(String(object.strength)))
    bad('strength', 'must be 1, 2 or 3');
  if (object.numericOrdering !== undefined && object.numericOrdering !== 'true' && object.numericOrdering !== 'false')
    bad('numericOrdering', 'must be true or false');
  if (!ok || !locale) return undefined;
  return {
    locale,
    ...(object.strength !== undefined ? { strength: Number(object.strength) as 1 | 2 | 3 } : {}),
    ...(object.numericOrdering !== undefined ? { numericOrdering: object.numericOrdering === 'true' } : {}),
  };
}

/**
 * A locale every store can sort by: a well-formed language tag (`de-DE`, or `de_DE` as MongoDB
 * spells it) that ICU has collation rules for. A word such as `true` is shaped like a tag but is
 * not one, and an unknown language has no rules; both are refused here rather than by a store.
 */
function collatableLocale(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$/.test(value)) return undefined;
  try {
    return Intl.Collator.supportedLocalesOf(value.replace(/_/g, '-')).length > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

function parseSelect(raw: Raw, fields: Map<string, FieldModel>, fail: Fail): string[] | undefined {
  if (raw.select === undefined) return undefined;
  const parts = (Array.isArray(raw.select) ? raw.select : [raw.select]).flatMap((part) =>
    typeof part === 'string'
      ? part
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean)
      : [fail('select', 'must be field names')],
  );
  const names: string[] = [];
  for (const name of parts) {
    if (name === undefined) continue;
    if (!fields.has(name)) return fail('select', `unknown field "${name}"`);
    if (!names.includes(name)) names.push(name);
  }
  if (names.length === 0) return fail('select', 'must name at least one field');
  return names;
}

function parseDates(raw: Raw, fields: Map<string, FieldModel>, where: Where[], fail: Fail): void {
  const fieldName = single(raw, 'dateField', fail) ?? 'createdAt';
  const field = fields.get(fieldName);
  if (field?.type !== 'isoDate') {
    fail(
      'dateField',
      `must name a date field (${[...fields.values()]
        .filter((f) => f.type === 'isoDate')
        .map((f) => f.name)
        .join(', ')})`,
    );
    return;
  }
  const from = single(raw, 'dateFrom', fail);
  const to = single(raw, 'dateTo', fail);
  const month = single(raw, 'dateMonth', fail);
  if (from !== undefined) {
    const time = parseIsoDate(from);
    if (time === undefined) fail('dateFrom', 'must be an ISO 8601 date or date-time');
    else where.push({ field: fieldName, op: 'gte', value: new Date(time).toISOString() });
  }
  if (to !== undefined) {
    const time = parseIsoDate(to);
    if (time === undefined) fail('dateTo', 'must be an ISO 8601 date or date-time');
    // A bare date includes that whole day (UTC).
    else
      where.push({
        field: fieldName,
        op: 'lte',
        value: DATE_ONLY.test(to) ? `${to}T23:59:59.999Z` : new Date(time).toISOString(),
      });
  }
  if (month !== undefined) {
    const match = MONTH.exec(month);
    if (!match) fail('dateMonth', 'must look like YYYY-MM');
    else {
      const start = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1));
      const end = new Date(Date.UTC(Number(match[1]), Number(match[2]), 1) - 1);
      where.push(
        { field: fieldName, op: 'gte', value: start.toISOString() },
        { field: fieldName, op: 'lte', value: end.toISOString() },
      );
    }
  }
}

function parseFilters(
  entity: EntityModel,
  raw: Raw,
  fields: Map<string, FieldModel>,
  where: Where[],
  fail: Fail,
): void {
  // Every filter is checked, so that several bad ones are all named in one answer.
  filters: for (const name of entity.filters) {
    if (raw[name] === undefined) continue;
    const field = fields.get(name);
    if (!field) continue;
    const given = raw[name];
    if (given !== null && typeof given === 'object' && !Array.isArray(given)) {
      parseOperators(name, field, given as Raw, where, fail);
      continue;
    }
    const values: unknown[] = [];
    for (const item of Array.isArray(given) ? given : [given]) {
      const value =
        typeof item === 'string' ? filterValueOf(field, item) : { error: 'must be a value, or a value repeated' };
      if (value.error) {
        fail(name, value.error);
        continue filters;
      }
      values.push(value.value);
    }
    if (field.type === 'array') where.push({ field: name, op: 'contains', value: values });
    else
      where.push(
        values.length === 1 ? { field: name, op: 'eq', value: values[0] } : { field: name, op: 'in', value: values },
      );
  }
}

/** `price[gt]=10&price[lte]=99`: each operator of the field's type, its value parsed by that type. */
function parseOperators(name: string, field: FieldModel, given: Raw, where: Where[], fail: Fail): void {
  const allowed = operatorsFor(field);
  for (const [op, input] of Object.entries(given)) {
    const key = `${name}[${op}]`;
    if (!(FILTER_OPERATORS as readonly string[]).includes(op)) {
      fail(key, `is not an operator; ${name} takes ${allowed.join(', ')}`);
      continue;
    }
    const operator = op as FilterOperator;
    if (!allowed.includes(operator)) {
      fail(key, `${operator} does not apply to ${field.type} fields; ${name} takes ${allowed.join(', ')}`);
      continue;
    }
    if (operator === 'in' || operator === 'nin') {
      const items = Array.isArray(input) ? input : [input];
      if (!items.every((item) => typeof item === 'string')) {
        fail(key, 'must be values, comma-separated or repeated');
        continue;
      }
      // One string is a comma-separated list; repeated parameters are one value each.
      const texts = Array.isArray(input) ? (items as string[]) : (input as string).split(',');
      if (texts.length > MAX_FILTER_VALUES) {
        fail(key, `must be at most ${MAX_FILTER_VALUES} values`);
        continue;
      }
      const values: unknown[] = [];
      for (const text of texts) {
        const value = filterValueOf(field, text);
        if (value.error) {
          fail(key, value.error);
          break;
        }
        values.push(value.value);
      }
      if (values.length !== texts.length) continue;
      if (field.type === 'array')
        where.push(
          operator === 'in'
            ? { field: name, op: 'contains', value: values }
            : { not: { field: name, op: 'contains', value: values } },
        );
      else where.push({ field: name, op: operator, value: values });
      continue;
    }
    if (typeof input !== 'string') {
      fail(key, 'must be given once');
      continue;
    }
    if (operator === 'exists') {
      if (input !== 'true' && input !== 'false') fail(key, 'must be true or false');
      else where.push({ field: name, op: 'exists', value: input === 'true' });
      continue;
    }
    if (operator === 'contains' || operator === 'startsWith') {
      if (input === '' || input.length > MAX_TEXT_FILTER) fail(key, `must be 1 to ${MAX_TEXT_FILTER} characters`);
      else where.push({ field: name, op: operator === 'contains' ? 'textContains' : 'textStartsWith', value: input });
      continue;
    }
    const value = filterValueOf(field, input);
    if (value.error) {
      fail(key, value.error);
      continue;
    }
    if (field.type === 'array') where.push({ field: name, op: 'contains', value: [value.value] });
    else where.push({ field: name, op: operator, value: value.value });
  }
}

/** A filter value parsed by the field's type (an array field: by its items' type). */
function filterValueOf(field: FieldModel, text: string): { value?: unknown; error?: string } {
  const valueType = field.type === 'array' ? field.items! : field;
  return filterValue(
    valueType.type,
    text,
    valueType.values?.map((v) => v.key),
  );
}

function filterValue(type: string, text: string, enumKeys?: string[]): { value?: unknown; error?: string } {
  switch (type) {
    case 'boolean':
      return text === 'true' || text === 'false' ? { value: text === 'true' } : { error: 'must be true or false' };
    case 'int':
      if (!INTEGER.test(text)) return { error: 'must be an integer' };
      return Number.isSafeInteger(Number(text))
        ? { value: Number(text) }
        : { error: `must be an integer from ${-Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}` };
    case 'float':
      return text.trim() !== '' && Number.isFinite(Number(text))
        ? { value: Number(text) }
        : { error: 'must be a number' };
    case 'objectId':
      return OBJECT_ID.test(text) ? { value: text } : { error: 'must be an id of 24 hexadecimal characters' };
    case 'enum':
      return enumKeys?.includes(text) ? { value: text } : { error: `must be one of ${enumKeys?.join(', ')}` };
    case 'isoDate': {
      const time = parseIsoDate(text);
      return time !== undefined
        ? { value: new Date(time).toISOString() }
        : { error: 'must be an ISO 8601 date or date-time' };
    }
    default:
      return { value: text };
  }
}
