import { andWhere } from '../access/accessFor.js';
import { fieldView } from '../access/fieldAccess.js';
import { listConstraint } from '../access/listConstraint.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import type { EntityModel, RelationModel } from '../model/types.js';
import type { Doc, Where } from '../store/types.js';
import { presentRecord } from './presentRecord.js';

/** Referencing records that `populate=<relation>` places in one record at most (newest first). */
export const MAX_RELATED_PER_RECORD = 100;

/** What `populate=<relation>` puts in a record: the newest referencing records the caller may see, and how many there are. */
export interface RelatedRecords {
  items: Doc[];
  totalCount: number;
}

export function relationOf(entity: EntityModel, name: string): RelationModel | undefined {
  return entity.relations?.find((r) => r.name === name);
}

/** The referencing records of one record: its id in their reference field (or among the ids of an array). */
export function referencing(ctx: RuntimeContext, relation: RelationModel, id: string): Where {
  const field = entityOf(ctx, relation.entity).model.fields.find((f) => f.name === relation.field);
  return field?.type === 'array'
    ? { field: relation.field, op: 'contains', value: [id] }
    : { field: relation.field, op: 'eq', value: id };
}

/**
 * `populate=<relation>` for each record: how many referencing records the caller may see (one
 * grouped count for a reference field, one count per record for an array of references), then
 * the newest MAX_RELATED_PER_RECORD of them. `budget` is asked before the records are read, with
 * the number that would be placed, so an answer too big is refused before it is built.
 */
export async function populateRelations(
  ctx: RuntimeContext,
  docs: Doc[],
  relations: RelationModel[],
  caller: Caller,
  budget: (records: number) => void,
): Promise<Map<string, RelatedRecords>[]> {
  const out = docs.map(() => new Map<string, RelatedRecords>());
  for (const relation of relations) {
    const target = entityOf(ctx, relation.entity).model;
    let visible: Where | undefined;
    try {
      visible = await listConstraint(ctx, caller, target, false);
    } catch (error) {
      // No view permission on the related entity: nothing to show, as a list would show nothing.
      if (!(error instanceof ApiError && (error.status === 401 || error.status === 403))) throw error;
      for (const map of out) map.set(relation.name, { items: [], totalCount: 0 });
      continue;
    }
    const counts = await countRelated(ctx, relation, target, docs, visible);
    budget(counts.reduce((sum, n) => sum + Math.min(n, MAX_RELATED_PER_RECORD), 0));
    for (const [i, doc] of docs.entries()) {
      const items =
        counts[i] === 0
          ? []
          : await ctx.store.find(relation.entity, {
              where: andWhere(visible, referencing(ctx, relation, doc.id)),
              sort: [{ field: 'id', direction: 'desc' }],
              limit: MAX_RELATED_PER_RECORD,
            });
      const view = fieldView(target, caller);
      out[i].set(relation.name, {
        items: items.map((item) => presentRecord(target, item, view)),
        totalCount: counts[i],
      });
    }
  }
  return out;
}

async function countRelated(
  ctx: RuntimeContext,
  relation: RelationModel,
  target: EntityModel,
  docs: Doc[],
  visible: Where | undefined,
): Promise<number[]> {
  const isArray = target.fields.find((f) => f.name === relation.field)?.type === 'array';
  if (isArray) {
    return Promise.all(
      docs.map((doc) =>
        ctx.store.count(relation.entity, { where: andWhere(visible, referencing(ctx, relation, doc.id)) }),
      ),
    );
  }
  const ids = docs.map((doc) => doc.id);
  const grouped = await ctx.store.aggregate(relation.entity, {
    where: andWhere(visible, { field: relation.field, op: 'in', value: ids }),
    groupBy: [{ field: relation.field }],
    timeZone: 'UTC',
    measures: [],
    sort: [],
    limit: Math.max(ids.length, 1),
    skip: 0,
  });
  const byId = new Map(grouped.groups.map((g) => [g.key[relation.field], g.count]));
  return ids.map((id) => byId.get(id) ?? 0);
}
