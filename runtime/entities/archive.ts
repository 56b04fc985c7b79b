import { findWritable } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, notFound } from '../errors/apiError.js';
import type { Doc } from '../store/types.js';
import { encryptFields, normalizeDates } from '../write/prepareWrite.js';
import { runBeforeUpdate, writeScope } from '../write/runHooks.js';
import { writeWithHistory } from '../write/writeWithHistory.js';
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
  const now = ctx.now().toISOString();
  const updated = await writeWithHistory(ctx, model, caller, changeReason, async (store) => {
    // beforeUpdate sees an empty patch with operation archive/restore; it may refuse, or add changes.
    const scope = writeScope({ ...ctx, store }, caller, new Date(now), move);
    const patch = await runBeforeUpdate(scope, plural, id, {}, doc);
    const extra = encryptFields(model, normalizeDates(model, patch), ctx.cipher);
    const after = await store.update(
      plural,
      id,
      { ...extra, archivedAt: move === 'archive' ? now : null, updatedAt: now },
      where,
    );
    if (!after) throw notFound(model.name);
    return { result: after, changes: [{ changeType: move, before: doc, after }] };
  });
  return presentRecord(model, updated);
}
