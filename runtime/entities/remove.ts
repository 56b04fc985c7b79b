import { findWritable } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { deleteForGood, deletePermanentlyOperation, trashOperation } from './trash.js';

export interface RemoveInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  caller: Caller;
  changeReason?: string;
  /** `?permanent=true`: for an entity that keeps a trash, delete for good (the purge permission). */
  permanent?: boolean;
}

/**
 * DELETE /{plural}/{id}: a hard delete; answers `{ id, deleted: true }`. An entity that keeps a
 * trash moves the record there instead (`trashed: true`), unless `permanent`.
 */
export async function removeOperation(input: RemoveInput): Promise<{ id: string; deleted: true; trashed?: true }> {
  const { ctx, plural, id, caller, changeReason, permanent } = input;
  const { model } = entityOf(ctx, plural);
  if (model.trash) return permanent ? deletePermanentlyOperation(input) : trashOperation(input);
  const { doc, where } = await findWritable(ctx, model, id, caller, 'delete');
  await deleteForGood(ctx, model, caller, doc, where, changeReason);
  return { id, deleted: true };
}
