import { findVisible } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { ListQuery } from '../query/listQuery.js';
import { type ListResult, listOperation } from './list.js';
import { referencing, relationOf } from './relatedRecords.js';

export interface RelationListInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  relation: string;
  query: ListQuery;
  caller: Caller;
}

/**
 * GET /{plural}/{id}/{relation}: 404 unless the caller may see the record, then the related
 * entity's own list (its view constraint, filters, sort, cursor, populate) of the records that
 * reference it.
 */
export async function relationListOperation({
  ctx,
  plural,
  id,
  relation,
  query,
  caller,
}: RelationListInput): Promise<ListResult> {
  const { model } = entityOf(ctx, plural);
  const declared = relationOf(model, relation)!;
  await findVisible(ctx, model, id, caller);
  return listOperation({
    ctx,
    plural: declared.entity,
    caller,
    query: { ...query, where: [...query.where, referencing(ctx, declared, id)] },
  });
}
