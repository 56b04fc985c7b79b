import type { WriteOperation } from '../context/hookTypes.js';
import type { RepositoryScope } from '../context/runtimeContext.js';
import type { RepositoryWriter } from '../repository.js';
import type { Doc } from '../store/types.js';
import { applyReferentialActions } from './referentialActions.js';
import {
  HookFailed,
  MAX_HOOK_DEPTH,
  runBeforeCreate,
  runBeforeDelete,
  runBeforeUpdate,
  type WriteScope,
} from './runHooks.js';
import { writeWithHistory } from './writeWithHistory.js';

/**
 * Repository writes as the runtime hands them out: each runs the entity's before-hooks, then the
 * store write with history and the event-log entry, in the scope's transaction (or a new one).
 * `scopeOf` gives the scope at the time of the write (jobs and afterCommit hooks take a fresh clock).
 */
export function repositoryWriter(scopeOf: () => RepositoryScope): RepositoryWriter {
  const entity = (scope: RepositoryScope, plural: string) => {
    const registered = scope.ctx.registry.entities.get(plural);
    if (!registered) throw new Error(`unknown entity ${plural}`);
    return registered.model;
  };
  const write = async <T>(
    plural: string,
    operation: WriteOperation,
    run: (scope: WriteScope) => Promise<{ result: T; changes: import('./recordChange.js').Change[] }>,
  ): Promise<T> => {
    const base = scopeOf();
    if (base.depth > MAX_HOOK_DEPTH) {
      const chain = [...base.path, plural].join(' -> ');
      throw new HookFailed(
        plural,
        'beforeCreate',
        `writes through hook repositories nest deeper than ${MAX_HOOK_DEPTH} levels: ${chain}`,
      );
    }
    return writeWithHistory(base.ctx, entity(base, plural), base.caller, undefined, (store) =>
      run({ ...base, ctx: { ...base.ctx, store }, operation }),
    );
  };
  return {
    create: (plural, data, system) =>
      write(plural, 'create', async (scope) => {
        const values = await runBeforeCreate(scope, plural, data);
        const after = await scope.ctx.store.insert(plural, { ...values, ...system } as Doc);
        return { result: after, changes: [{ changeType: 'create', after }] };
      }),
    update: (plural, id, data, system) =>
      write(plural, 'update', async (scope) => {
        const before = await scope.ctx.store.get(plural, id);
        if (!before) return { result: null, changes: [] };
        const patch = await runBeforeUpdate(scope, plural, id, data, before);
        const after = await scope.ctx.store.update(plural, id, { ...patch, ...system });
        return { result: after, changes: after ? [{ changeType: 'update', before, after }] : [] };
      }),
    increment: (plural, id, by, system) =>
      write(plural, 'increment', async (scope) => {
        const before = await scope.ctx.store.get(plural, id);
        if (!before) return { result: null, changes: [] };
        let after = await scope.ctx.store.increment(plural, id, by, system);
        if (!after) return { result: null, changes: [] };
        const resulting = Object.fromEntries(Object.keys(by).map((name) => [name, after![name]]));
        const patch = await runBeforeUpdate(scope, plural, id, resulting, before);
        const changed = Object.fromEntries(Object.entries(patch).filter(([name, value]) => resulting[name] !== value));
        if (Object.keys(changed).length > 0) after = await scope.ctx.store.update(plural, id, changed);
        return { result: after, changes: [{ changeType: 'update', event: 'incremented', before, after: after! }] };
      }),
    remove: (plural, id) =>
      write(plural, 'delete', async (scope) => {
        const before = await scope.ctx.store.get(plural, id);
        if (!before) return { result: false, changes: [] };
        await runBeforeDelete(scope, plural, id, before);
        // Records that reference it are refused, cleared or deleted first, in this transaction.
        await applyReferentialActions(scope, repositoryWriter(nested(scope, plural)), plural, id);
        const removed = await scope.ctx.store.remove(plural, id);
        return { result: removed, changes: removed ? [{ changeType: 'delete', before }] : [] };
      }),
  };
}

/** The scope of writes made on behalf of a write in `scope` (one level deeper, same transaction). */
export function nested(scope: RepositoryScope, plural: string): () => RepositoryScope {
  return () => ({ ...scope, depth: scope.depth + 1, path: [...scope.path, plural] });
}
