import type { AppModel, EntityModel, FieldModel, LocalesModel } from './types.js';

/**
 * Localized fields (`localized: true`) hold one value per locale. The stores keep each locale in
 * a column of its own: the default locale in the field's own column (so a field that becomes
 * localized keeps its values, as the default locale's), every other one beside it as
 * `<field>__<locale>` (`title__de`, `title__pt_BR`), which no declared field name can be. Filters,
 * order, search, indexes and unique constraints then work per locale on every store unchanged.
 */
export function localeColumn(field: string, locale: string, locales: LocalesModel): string {
  return locale === locales.default ? field : `${field}__${locale.replace('-', '_')}`;
}

/** The locales a read of `locale` looks in, in order: itself, its fallbacks followed in turn, the default. */
export function fallbackChain(locales: LocalesModel, locale: string): string[] {
  const chain: string[] = [];
  const visit = (next: string) => {
    if (chain.includes(next)) return;
    chain.push(next);
    for (const after of locales.fallback[next] ?? []) visit(after);
  };
  visit(locale);
  if (!chain.includes(locales.default)) chain.push(locales.default);
  return chain;
}

/**
 * How a read shows localized fields: one locale's value through its fallback chain (with the
 * locale each value came from), or every locale as an object keyed by locale (`all`).
 */
export type ReadLocale = { locale: string; chain: readonly string[] } | 'all';

/** The read of one locale. */
export function readLocale(locales: LocalesModel, locale: string): ReadLocale {
  return { locale, chain: fallbackChain(locales, locale) };
}

/** The first locale of the chain that has a value, and that value; undefined when none has one. */
export function pickLocale(
  values: Record<string, unknown> | null | undefined,
  chain: readonly string[],
): { locale: string; value: unknown } | undefined {
  if (!values || typeof values !== 'object') return undefined;
  for (const locale of chain) {
    const value = values[locale];
    if (value !== undefined && value !== null) return { locale, value };
  }
  return undefined;
}

/** The most languages of an Accept-Language header looked at: the rest is ignored. */
const MAX_ACCEPTED = 20;

/**
 * The available locale an Accept-Language header prefers most (RFC 9110 weights; `de-CH` also
 * matches `de`, `de` also matches `de-AT`), or undefined when it names none of them.
 */
export function acceptedLocale(header: string | undefined, available: readonly string[]): string | undefined {
  if (!header) return undefined;
  const ranges = header
    .split(',', MAX_ACCEPTED)
    .map((part, order) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag: tag.trim().toLowerCase(), weight: Number.isFinite(weight) ? weight : 0, order };
    })
    .filter((range) => range.tag.length > 0 && range.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.order - b.order);
  const lower = available.map((locale) => locale.toLowerCase());
  for (const { tag } of ranges) {
    const exact = lower.indexOf(tag);
    if (exact >= 0) return available[exact];
    const language = tag.split('-')[0];
    const near = lower.findIndex((locale) => locale === language || locale.split('-')[0] === language);
    if (near >= 0) return available[near];
  }
  return undefined;
}

/** The entity's localized fields. */
export function localizedFields(entity: EntityModel): FieldModel[] {
  return entity.fields.filter((f) => f.localized);
}

/**
 * The model as the stores see it: each localized field one column per locale (each keeping the
 * field's type, constraints, uniqueness, search and order), none of them localized any more.
 */
export function physicalModel(model: AppModel): AppModel {
  const locales = model.locales;
  if (!locales || !model.entities.some((e) => e.fields.some((f) => f.localized))) return model;
  const columns = (entity: EntityModel, name: string): string[] => {
    const field = entity.fields.find((f) => f.name === name);
    return field?.localized ? field.localized.locales.map((l) => localeColumn(name, l, locales)) : [name];
  };
  return {
    ...model,
    entities: model.entities.map((entity) => {
      if (!entity.fields.some((f) => f.localized)) return entity;
      return {
        ...entity,
        fields: entity.fields.flatMap((field) => {
          if (!field.localized) return [field];
          const { localized: _, ...plain } = field;
          // A searched field's columns keep folded text too: a search in one locale looks there.
          return field.localized.locales.map((locale) => ({
            ...plain,
            name: localeColumn(field.name, locale, locales),
            required: false,
            filterable: plain.filterable || plain.search,
          }));
        }),
        filters: entity.filters.flatMap((name) => columns(entity, name)),
        searchFields: entity.searchFields.flatMap((name) => columns(entity, name)),
        sortable: entity.sortable.flatMap((name) => columns(entity, name)),
      };
    }),
  };
}
