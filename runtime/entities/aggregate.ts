import { andWhere } from '../access/accessFor.js';
import { listConstraint } from '../access/listConstraint.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { ReadLocale } from '../model/locales.js';
import type { ListQuery } from '../query/listQuery.js';
import type { AggregateRequest } from '../query/parseAggregateQuery.js';
import type { Accumulator, AggregateSort } from '../store/types.js';
import { columnFor, localizeListQuery } from './localize.js';

export interface AggregateInput {
  ctx: RuntimeContext;
  plural: string;
  query: AggregateRequest;
  caller: Caller;
  /** The locale localized fields are grouped, measured and filtered in (absent: the default's). */
  locale?: ReadLocale;
}

/** One group as the API answers it: its key, its count, then each aggregated value by operation. */
export type GroupView = { key: Record<string, unknown>; count: number } & Partial<
  Record<Accumulator, Record<string, number | string | null>>
>;

export interface AggregateView {
  groups: GroupView[];
  totalGroups: number;
}

/**
 * GET /{plural}/aggregate: the records the caller's list would show (view constraint: roles,
 * ownership, grants, tenancy; archived left out unless asked for) narrowed by the filters, then
 * grouped and aggregated by the store.
 */
export async function aggregateOperation({
  ctx,
  plural,
  query,
  caller,
  locale,
}: AggregateInput): Promise<AggregateView> {
  const { model } = entityOf(ctx, plural);
  const locales = ctx.registry.model.locales;
  // Localized fields are read in the request's locale's column, and answered under their own name.
  const column = (field: string) => (locales && locale ? columnFor(model, locales, field, locale) : field);
  const named = new Map<string, string>();
  const rename = (field: string) => {
    const to = column(field);
    if (to !== field) named.set(to, field);
    return to;
  };
  const where = andWhere(
    await listConstraint(ctx, caller, model, query.includeArchived),
    ...(locales && locale
      ? localizeListQuery(model, locales, { where: query.where, text: query.text } as ListQuery, locale).where
      : query.where),
  );
  const result = await ctx.store.aggregate(plural, {
    where,
    text: query.text,
    groupBy: query.groupBy.map((key) => ({ ...key, field: rename(key.field) })),
    timeZone: query.timeZone,
    measures: query.measures.map((measure) => ({ ...measure, field: rename(measure.field) })),
    sort: query.sort.map((key) => {
      const [kind, field] = key.column.split(/\.(.*)/s);
      return field === undefined ? key : { ...key, column: `${kind}.${rename(field)}` as AggregateSort['column'] };
    }),
    limit: query.limit,
    skip: query.skip,
  });
  const back = (record: Record<string, unknown>) =>
    named.size === 0 ? record : Object.fromEntries(Object.entries(record).map(([k, v]) => [named.get(k) ?? k, v]));
  return {
    groups: result.groups.map(({ key, count, values }) => ({
      key: back(key),
      count,
      ...Object.fromEntries(Object.entries(values).map(([op, byField]) => [op, back(byField ?? {})])),
    })),
    totalGroups: result.totalGroups,
  };
}
