import { fieldView } from '../access/fieldAccess.js';
import { findWritable } from '../access/requireAccess.js';
import { parseDuration } from '../config/runtimeConfig.js';
import { type Caller, SYSTEM_CALLER } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, notFound } from '../errors/apiError.js';
import type { EntityModel } from '../model/types.js';
import { seeingTrash, TRASHED } from '../store/trashStore.js';
import type { Doc, Store } from '../store/types.js';
import { encryptFields, normalizeDates } from '../write/prepareWrite.js';
import { runWrite } from '../write/writePipeline.js';
import { presentRecord } from './presentRecord.js';

export interface TrashInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  caller: Caller;
  changeReason?: string;
}

/** The context whose store sees trashed records too: for the trash's own operations. */
export function seeingTrashContext(ctx: RuntimeContext): RuntimeContext {
  return { ...ctx, store: seeingTrash(ctx.store) };
}

/**
 * DELETE /{plural}/{id} of an entity that keeps a trash: the record moves there (trashedAt set),
 * with the delete permission, before-delete hooks and rules; history and the event log say
 * `trashed`. Records that reference it keep their references until it is purged.
 */
export async function trashOperation({
  ctx,
  plural,
  id,
  caller,
  changeReason,
}: TrashInput): Promise<{ id: string; deleted: true; trashed: true }> {
  const { model } = entityOf(ctx, plural);
  const { doc, where } = await findWritable(ctx, model, id, caller, 'delete');
  await runWrite({
    ctx,
    entity: model,
    caller,
    operation: 'trash',
    changeReason,
    rule: { trash: doc },
    write: async ({ store, now, beforeDelete }) => {
      await beforeDelete(id, doc);
      const at = now.toISOString();
      const after = await store.update(plural, id, { trashedAt: at, updatedAt: at }, where);
      if (!after) throw notFound(model.name);
      return { result: after, changes: [{ changeType: 'trash', before: doc, after }] };
    },
  });
  return { id, deleted: true, trashed: true };
}

/**
 * POST /{plural}/{id}/restore-from-trash: the record leaves the trash as it was when it went in
 * (archived or not). Needs the delete permission, as putting it there did; 404 when it is not
 * in the trash (or not viewable), 409 when a unique value it holds was taken meanwhile.
 */
export async function restoreFromTrashOperation({ ctx, plural, id, caller, changeReason }: TrashInput): Promise<Doc> {
  const { model } = entityOf(ctx, plural);
  const { doc, where } = await findWritable(seeingTrashContext(ctx), model, id, caller, 'delete');
  if (doc.trashedAt === null || doc.trashedAt === undefined)
    throw new ApiError('NOT_FOUND', `This ${model.name} is not in the trash`);
  const restored = await runWrite({
    ctx,
    entity: model,
    caller,
    operation: 'untrash',
    changeReason,
    write: async ({ store, now, beforeUpdate }) => {
      // beforeUpdate sees an empty patch with operation untrash; it may refuse, or add changes.
      const patch = await beforeUpdate(id, {}, doc);
      const extra = encryptFields(model, normalizeDates(model, patch), ctx.cipher);
      const after = await seeingTrash(store).update(
        plural,
        id,
        { ...extra, trashedAt: null, updatedAt: now.toISOString() },
        { and: [TRASHED, ...(where ? [where] : [])] },
      );
      if (!after) throw notFound(model.name);
      return { result: after, changes: [{ changeType: 'untrash', before: doc, after }] };
    },
  });
  return presentRecord(model, restored, fieldView(model, caller));
}

/**
 * Deletes one record for good, in the trash or not (DELETE, DELETE ?permanent=true, the purge):
 * the features' rules for a delete hold, its references' `onDelete` actions apply (restrict
 * refuses with 409), before-delete hooks run, history and the event log say `deleted`. `where`
 * repeats the caller's permission in the write. Answers the record as the delete's transaction
 * last read it.
 */
export async function deleteForGood(
  ctx: RuntimeContext,
  model: EntityModel,
  caller: Caller,
  doc: Doc,
  where: Parameters<Store['remove']>[2],
  changeReason: string | undefined,
): Promise<Doc> {
  return runWrite({
    ctx,
    entity: model,
    caller,
    operation: 'delete',
    changeReason,
    rule: { remove: doc },
    write: async (step) => {
      const store = seeingTrash(step.store);
      const before = (await store.get(model.plural, doc.id)) ?? doc;
      // Hooks and referential actions see the rest of the data as requests do: trashed records hidden.
      await step.beforeDelete(doc.id, before);
      await step.referentialActions(doc.id);
      if (!(await store.remove(model.plural, doc.id, where))) throw notFound(model.name);
      return { result: before, changes: [{ changeType: 'delete', before }] };
    },
  });
}

/** DELETE /{plural}/{id}?permanent=true of an entity that keeps a trash: needs the purge permission. */
export async function deletePermanentlyOperation({
  ctx,
  plural,
  id,
  caller,
  changeReason,
}: TrashInput): Promise<{ id: string; deleted: true }> {
  const { model } = entityOf(ctx, plural);
  const { doc, where } = await findWritable(seeingTrashContext(ctx), model, id, caller, 'purge');
  await deleteForGood(ctx, model, caller, doc, where, changeReason);
  return { id, deleted: true };
}

/** Records purged per entity in one run of the purge job, oldest first; the next run goes on. */
const PURGE_BATCH = 500;

export interface PurgeOutcome {
  purged: number;
  /** Records a `restrict` reference (or a hook) kept: they stay in the trash, tried again next run. */
  kept: { entity: string; id: string; reason: string }[];
}

/**
 * The purge job: every record trashed longer ago than its entity's `trash.retention` is deleted
 * for good, as by DELETE ?permanent=true of the system (hooks, references, history, events).
 * A record whose delete is refused stays in the trash and is reported.
 */
export async function purgeTrash(ctx: RuntimeContext, signal?: AbortSignal): Promise<PurgeOutcome> {
  const outcome: PurgeOutcome = { purged: 0, kept: [] };
  const store = seeingTrash(ctx.store);
  for (const { model } of ctx.registry.entities.values()) {
    if (!model.trash) continue;
    const cutoff = new Date(ctx.now().getTime() - parseDuration(model.trash.retention)).toISOString();
    const due = await store.find(model.plural, {
      where: { field: 'trashedAt', op: 'lt', value: cutoff },
      sort: [
        { field: 'trashedAt', direction: 'asc' },
        { field: 'id', direction: 'asc' },
      ],
      limit: PURGE_BATCH,
    });
    for (const doc of due) {
      if (signal?.aborted) return outcome;
      try {
        await deleteForGood(ctx, model, SYSTEM_CALLER, doc, TRASHED, 'trash retention ended');
        outcome.purged += 1;
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        outcome.kept.push({ entity: model.plural, id: doc.id, reason: error.message });
      }
    }
  }
  return outcome;
}
