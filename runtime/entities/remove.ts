import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import { notFound } from '../errors/apiError.js';
import { writeWithHistory } from '../history/writeWithHistory.js';
import { nested, repositoryWriter } from '../hooks/repositoryWriter.js';
import { runBeforeDelete, writeScope } from '../hooks/runHooks.js';
import { entityOf } from './entityOf.js';
import { rulesFor } from './entityRules.js';
import { applyReferentialActions } from './referentialActions.js';
import { findWritable } from './requireAccess.js';
import { deletePermanentlyOperation, trashOperation } from './trash.js';

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
  await rulesFor(ctx, plural)?.beforeRemove?.(ctx, caller, doc);
  // Full versioning writes a `delete` version, with the last state, in the same transaction.
  let removed = doc;
  const result = await writeWithHistory(ctx, model, caller, changeReason, async (store) => {
    const before = (await store.get(plural, id)) ?? doc;
    const scope = writeScope({ ...ctx, store }, caller, ctx.now(), 'delete');
    await runBeforeDelete(scope, plural, id, before);
    // Records that reference it are refused (409), cleared or deleted first, in this transaction.
    await applyReferentialActions(scope, repositoryWriter(nested(scope, plural)), plural, id);
    removed = before;
    if (!(await store.remove(plural, id, where))) throw notFound(model.name);
    return { result: { id, deleted: true as const }, changes: [{ changeType: 'delete', before }] };
  });
  rulesFor(ctx, plural)?.afterRemove?.(removed);
  return result;
}
