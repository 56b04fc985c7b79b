import type { RuntimeContext } from '../context/runtimeContext.js';
import { validationError } from '../errors/apiError.js';
import { localeColumn, pickLocale, type ReadLocale, readLocale } from '../model/locales.js';
import type { EntityModel, LocalesModel } from '../model/types.js';
import type { ListQuery } from '../query/listQuery.js';
import { searchTerms } from '../store/common/searchText.js';
import type { Doc, SortKey, Where } from '../store/types.js';

/** How deep populated records are localized (populate reaches two levels). */
const MAX_DEPTH = 4;

/**
 * A record as a read in one locale shows it: each localized field the value of the first locale
 * of the chain that has one (null when none has), and `_locales` naming where each value came
 * from; populated references and relations are shown the same way. `all` shows every locale.
 */
export function localizeRecord(
  ctx: RuntimeContext,
  entity: EntityModel,
  record: Doc,
  read: ReadLocale,
  depth = 0,
): Doc {
  if (read === 'all' || depth > MAX_DEPTH || !record || typeof record !== 'object') return record;
  if (!showsLocalized(ctx, entity)) return record;
  let out: Record<string, unknown> | undefined;
  const sources: Record<string, string> = {};
  for (const field of entity.fields) {
    const value = record[field.name];
    if (value === undefined || value === null) continue;
    if (field.localized) {
      out ??= { ...record };
      const picked = pickLocale(value as Record<string, unknown>, read.chain);
      out[field.name] = picked ? picked.value : null;
      if (picked) sources[field.name] = picked.locale;
      continue;
    }
    const target = field.ref ?? (field.items?.type === 'objectId' ? field.items.ref : undefined);
    if (!target || typeof value !== 'object') continue;
    const referenced = ctx.registry.entities.get(target)?.model;
    if (!referenced) continue;
    out ??= { ...record };
    out[field.name] = Array.isArray(value)
      ? value.map((item) =>
          item && typeof item === 'object' ? localizeRecord(ctx, referenced, item, read, depth + 1) : item,
        )
      : localizeRecord(ctx, referenced, value as Doc, read, depth + 1);
  }
  for (const relation of entity.relations ?? []) {
    const related = record[relation.name] as { items?: Doc[] } | undefined;
    const target = ctx.registry.entities.get(relation.entity)?.model;
    if (!related?.items || !target) continue;
    out ??= { ...record };
    out[relation.name] = {
      ...related,
      items: related.items.map((item) => localizeRecord(ctx, target, item, read, depth + 1)),
    };
  }
  // Only a record that shows a localized field says where its values came from (not a reference
  // the caller may not see, answered as `{ id }`, nor a select without one).
  if (entity.fields.some((f) => f.localized && f.name in record)) {
    out ??= { ...record };
    out._locales = sources;
  }
  return (out ?? record) as Doc;
}

const reachesLocalized = new WeakMap<EntityModel, boolean>();

/**
 * Whether a record of the entity can show a localized value: a field of its own, or one of a
 * record it references or lists (populate). Answers of other entities do not depend on the locale.
 */
export function showsLocalized(ctx: RuntimeContext, entity: EntityModel): boolean {
  let shows = reachesLocalized.get(entity);
  if (shows === undefined) {
    shows = reaches(ctx, entity, new Set());
    reachesLocalized.set(entity, shows);
  }
  return shows;
}

function reaches(ctx: RuntimeContext, entity: EntityModel, seen: Set<EntityModel>): boolean {
  if (seen.has(entity)) return false;
  seen.add(entity);
  const reached = (name: string | undefined) => {
    const target = name === undefined ? undefined : ctx.registry.entities.get(name)?.model;
    return target !== undefined && reaches(ctx, target, seen);
  };
  return (
    entity.fields.some(
      (field) =>
        field.localized || reached(field.ref ?? (field.items?.type === 'objectId' ? field.items.ref : undefined)),
    ) || (entity.relations ?? []).some((relation) => reached(relation.entity))
  );
}

/**
 * A write body with each localized field keyed by locale: a plain value is `locale`'s (the
 * request's `?locale`, else the default); an object keyed by locale, or null, stays as it is.
 */
export function localizeBody(entity: EntityModel, body: unknown, locale: string): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  let out: Record<string, unknown> | undefined;
  for (const field of entity.fields) {
    if (!field.localized) continue;
    const value = (body as Record<string, unknown>)[field.name];
    if (value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value))) continue;
    out ??= { ...(body as Record<string, unknown>) };
    out[field.name] = { [locale]: value };
  }
  return out ?? body;
}

/**
 * A write body as the validators take it: localized fields keyed by locale, plain values being
 * `locale`'s (absent: the default locale's); unchanged where the application has no locales.
 */
export function writtenIn(ctx: RuntimeContext, entity: EntityModel, body: unknown, locale?: string): unknown {
  const locales = ctx.registry.model.locales;
  return locales ? localizeBody(entity, body, locale ?? locales.default) : body;
}

/** The locale a request reads in and the one its plain values are written in. */
export interface RequestLocale {
  read: ReadLocale;
  write: string;
}

/**
 * `?locale=de` (or `*`: every locale), else the best of Accept-Language, else the default; a
 * locale the application does not have is a 400.
 */
export function requestLocale(locales: LocalesModel, parameter: unknown, accepted: string | undefined): RequestLocale {
  if (parameter === undefined) {
    const locale = accepted ?? locales.default;
    return { read: readLocale(locales, locale), write: locales.default };
  }
  if (parameter === '*') return { read: 'all', write: locales.default };
  if (typeof parameter !== 'string' || !locales.available.includes(parameter))
    throw validationError(
      { locale: `must be one of ${locales.available.join(', ')}, or * for every locale` },
      'Invalid query parameters',
    );
  return { read: readLocale(locales, parameter), write: parameter };
}

/** The column a read in `read` filters and sorts a localized field by: its locale's (the default's for `all`). */
export function columnFor(entity: EntityModel, locales: LocalesModel, field: string, read: ReadLocale): string {
  const model = entity.fields.find((f) => f.name === field);
  if (!model?.localized || read === 'all') return field;
  return localeColumn(field, read.chain[0], locales);
}

/** A list query whose conditions and order on localized fields look at the read's locale. */
export function localizeListQuery(
  entity: EntityModel,
  locales: LocalesModel,
  query: ListQuery,
  read: ReadLocale,
): ListQuery {
  if (read === 'all' || !entity.fields.some((f) => f.localized)) return query;
  const column = (field: string) => columnFor(entity, locales, field, read);
  return {
    ...query,
    where: [
      ...query.where.map((where) => localizeWhere(where, column)),
      ...(query.text ? searchedIn(entity, query.text, column) : []),
    ],
    ...(query.sort ? { sort: query.sort.map((key: SortKey) => ({ ...key, field: column(key.field) })) } : {}),
  };
}

/**
 * A search in one locale: the store matches every term as a word prefix in any searched column,
 * of any locale; this keeps the records where each term also stands in the requested locale's
 * value of a localized searched field, or in a searched field that is not localized.
 */
export function searchedIn(entity: EntityModel, text: string, column: (field: string) => string): Where[] {
  const searched = entity.fields.filter((f) => entity.searchFields.includes(f.name));
  if (!searched.some((f) => f.localized)) return [];
  return searchTerms(text).map((term) => ({
    or: searched.map((f) => ({ field: column(f.name), op: 'textContains' as const, value: term })),
  }));
}

/** Conditions on this entity's fields renamed; those through a reference belong to the other entity. */
function localizeWhere(where: Where, column: (field: string) => string): Where {
  if ('field' in where) return { ...where, field: column(where.field) };
  if ('and' in where) return { and: where.and.map((w) => localizeWhere(w, column)) };
  if ('or' in where) return { or: where.or.map((w) => localizeWhere(w, column)) };
  if ('not' in where) return { not: localizeWhere(where.not, column) };
  return where;
}
