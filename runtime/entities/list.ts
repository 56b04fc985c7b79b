import { andWhere } from '../access/accessFor.js';
import { fieldView } from '../access/fieldAccess.js';
import { listConstraint } from '../access/listConstraint.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { openSealedValue, sealValue } from '../crypto/signedToken.js';
import type { CursorPosition, ListQuery } from '../query/listQuery.js';
import { seeingTrash } from '../store/trashStore.js';
import type { Doc, FindQuery } from '../store/types.js';
import { populateRecords } from './populate.js';
import { presentRecord } from './presentRecord.js';

export interface ListInput {
  ctx: RuntimeContext;
  plural: string;
  query: ListQuery;
  caller: Caller;
}

export interface ListResult {
  items: Doc[];
  totalCount: number;
  totalPages: number;
  nextCursor?: string;
}

/**
 * GET /{plural}: the caller's view constraint, archived and trashed records left out (or the
 * trash asked for), filters, text, order, page.
 */
export async function listOperation({ ctx, plural, query, caller }: ListInput): Promise<ListResult> {
  const { model } = entityOf(ctx, plural);
  // Only the list's own reads see the trash: constraints and populated references do not.
  const store = query.trash ? seeingTrash(ctx.store) : ctx.store;
  const where = andWhere(await listConstraint(ctx, caller, model, query.includeArchived, query.trash), ...query.where);
  const keyset = !query.sort;
  const find: FindQuery = {
    where,
    text: query.text,
    sort: query.sort
      ? [...query.sort, { field: 'id', direction: query.sort.at(-1)!.direction }]
      : [{ field: 'id', direction: query.idDirection }],
    collation: query.collation,
    skip: query.skip,
    // One record more than asked tells whether a next page exists.
    limit: keyset ? query.limit + 1 : query.limit,
    after: query.after,
    select: query.select,
    remember: true,
  };
  const [found, totalCount] = await Promise.all([
    store.find(plural, find),
    store.count(plural, { where, text: query.text }),
  ]);
  const more = keyset && found.length > query.limit;
  const view = fieldView(model, caller);
  let items = (more ? found.slice(0, query.limit) : found).map((doc) => presentRecord(model, doc, view));
  if (query.populate) items = await populateRecords(ctx, model, items, query.populate, caller);
  return {
    items,
    totalCount,
    totalPages: Math.ceil(totalCount / query.limit),
    ...(more ? { nextCursor: sealValue(ctx.secrets.signing, { a: items.at(-1)!.id, d: query.idDirection }) } : {}),
  };
}

/** A list's cursor (nextCursor) opened: where the next page starts; undefined when it is not one of ours. */
export function openListCursor(ctx: RuntimeContext, cursor: string): CursorPosition | undefined {
  const value = openSealedValue(ctx.secrets.signing, cursor) as { a?: unknown; d?: unknown } | undefined;
  if (!value || typeof value.a !== 'string' || (value.d !== 'asc' && value.d !== 'desc')) return undefined;
  return { after: value.a, direction: value.d };
}
