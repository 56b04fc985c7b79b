import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import { notFound } from '../http/errors.js';
import type { Doc } from '../store/types.js';
import { requireValid } from './createRecord.js';
import { entityOf } from './entityOf.js';
import { presentRecord } from './presentRecord.js';
import { findWritable } from './requireAccess.js';
import { writeWithHistory } from '../history/writeWithHistory.js';

export interface IncrementOperationInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  body: unknown;
  caller: Caller;
  changeReason?: string;
}

/** PATCH /{plural}/{id}/increment: numeric fields change atomically in the database; no read-modify-write. */
export async function incrementOperation({ ctx, plural, id, body, caller, changeReason }: IncrementOperationInput): Promise<Doc> {
  const { model, validators } = entityOf(ctx, plural);
  const { where } = await findWritable(ctx, model, id, caller, 'edit');
  const amounts = requireValid(validators.increment, body) as Record<string, number>;
  const updated = await writeWithHistory(ctx, model, caller, changeReason, async (store) => {
    const before = (await store.get(plural, id)) ?? undefined;
    const after = await store.increment(plural, id, amounts, { updatedAt: ctx.now().toISOString() }, where);
    if (!after) throw notFound(model.name);
    return { result: after, changes: [{ changeType: 'update', before, after }] };
  });
  return presentRecord(model, updated);
}
