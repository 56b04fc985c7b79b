import { fieldView } from '../access/fieldAccess.js';
import { findWritable } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, notFound } from '../errors/apiError.js';
import type { Doc } from '../store/types.js';
import { encryptFields, normalizeDates } from '../write/prepareWrite.js';
import { runWrite } from '../write/writePipeline.js';
import { presentRecord } from './presentRecord.js';

export interface ArchiveInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  caller: Caller;
  changeReason?: string;
}

/** POST /{plural}/{id}/archive: active -> archived (archivedAt set); needs edit permission. */
export function archiveOperation(input: ArchiveInput): Promise<Doc> {
  return moveArchiveState(input, 'archive');
}

/** POST /{plural}/{id}/restore: archived -> active (archivedAt null); needs edit permission. */
export function restoreOperation(input: ArchiveInput): Promise<Doc> {
  return moveArchiveState(input, 'restore');
}

async function moveArchiveState(
  { ctx, plural, id, caller, changeReason }: ArchiveInput,
  move: 'archive' | 'restore',
): Promise<Doc> {
  const { model } = entityOf(ctx, plural);
  const { doc, where } = await findWritable(ctx, model, id, caller, 'edit');
  const archived = doc.archivedAt !== null && doc.archivedAt !== undefined;
  if (move === 'archive' && archived)
    throw new ApiError('UNPROCESSABLE_ENTITY', `This ${model.name} is already archived`);
  if (move === 'restore' && !archived) throw new ApiError('UNPROCESSABLE_ENTITY', `This ${model.name} is not archived`);
  const updated = await runWrite({
    ctx,
    entity: model,
    caller,
    operation: move,
    changeReason,
    write: async ({ store, now, beforeUpdate }) => {
      // beforeUpdate sees an empty patch with operation archive/restore; it may refuse, or add changes.
      const patch = await beforeUpdate(id, {}, doc);
      const extra = encryptFields(model, normalizeDates(model, patch), ctx.cipher);
      const at = now.toISOString();
      const after = await store.update(
        plural,
        id,
        { ...extra, archivedAt: move === 'archive' ? at : null, updatedAt: at },
        where,
      );
      if (!after) throw notFound(model.name);
      return { result: after, changes: [{ changeType: move, before: doc, after }] };
    },
  });
  return presentRecord(model, updated, fieldView(model, caller));
}
