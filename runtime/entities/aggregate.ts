import { andWhere } from '../access/accessFor.js';
import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import type { AggregateRequest } from '../query/parseAggregateQuery.js';
import type { Accumulator } from '../store/types.js';
import { entityOf } from './entityOf.js';
import { listConstraint } from './listConstraint.js';

export interface AggregateInput {
  ctx: RuntimeContext;
  plural: string;
  query: AggregateRequest;
  caller: Caller;
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
export async function aggregateOperation({ ctx, plural, query, caller }: AggregateInput): Promise<AggregateView> {
  const { model } = entityOf(ctx, plural);
  const where = andWhere(await listConstraint(ctx, caller, model, query.includeArchived), ...query.where);
  const result = await ctx.store.aggregate(plural, {
    where,
    text: query.text,
    groupBy: query.groupBy,
    timeZone: query.timeZone,
    measures: query.measures,
    sort: query.sort,
    limit: query.limit,
    skip: query.skip,
  });
  return {
    groups: result.groups.map(({ key, count, values }) => ({ key, count, ...values })),
    totalGroups: result.totalGroups,
  };
}
