import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import type { EntityModel } from '../model/types.js';
import type { Store } from '../store/types.js';
import { type Change, hasHistory, recordChange } from './recordChange.js';

/**
 * Runs an entity write and the history of its changes in one transaction: both commit, or
 * neither does. Entities without history write directly.
 */
export async function writeWithHistory<T>(
  ctx: RuntimeContext,
  entity: EntityModel,
  caller: Caller,
  changeReason: string | undefined,
  write: (store: Store) => Promise<{ result: T; changes: Change[] }>,
): Promise<T> {
  if (!hasHistory(entity)) return (await write(ctx.store)).result;
  return ctx.store.transaction(async (tx) => {
    const { result, changes } = await write(tx);
    const context = { changedBy: caller.user?.id ?? 'anonymous', changeReason };
    for (const change of changes) await recordChange(tx, ctx, entity, change, context);
    return result;
  });
}
