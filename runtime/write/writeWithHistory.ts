import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { EntityModel } from '../model/types.js';
import type { Store } from '../store/types.js';
import { appendEvents, isLogged } from './eventLog.js';
import { type Change, eventOf, hasHistory, recordChange } from './recordChange.js';

/**
 * Runs an entity write, the history of its changes and their event-log entries in one
 * transaction: all commit, or none does. Internal entities without history write directly.
 * After the commit the event dispatcher is told (afterCommit hooks read the log).
 */
export async function writeWithHistory<T>(
  ctx: RuntimeContext,
  entity: EntityModel,
  caller: Caller,
  changeReason: string | undefined,
  write: (store: Store) => Promise<{ result: T; changes: Change[] }>,
): Promise<T> {
  if (!hasHistory(entity) && !isLogged(entity)) return (await write(ctx.store)).result;
  const result = await ctx.store.transaction(async (tx) => {
    const { result, changes } = await write(tx);
    const context = { changedBy: caller.user?.id ?? 'anonymous', changedFrom: caller.address, changeReason };
    if (hasHistory(entity)) for (const change of changes) await recordChange(tx, ctx, entity, change, context);
    const logged = changes.map((change) => ({
      event: eventOf(change),
      id: (change.after?.id ?? change.before?.id) as string,
      before: change.before,
      after: change.after,
    }));
    await appendEvents(tx, entity, logged, caller, ctx.now());
    return result;
  });
  ctx.notifyCommitted?.(entity.plural);
  return result;
}
