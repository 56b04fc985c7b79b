import type { AfterCommitArgs, EntityHooks, HookTable } from '../context/hookTypes.js';
import type { FileStorage } from '../files/fileStorage.js';
import { MEDIA_ASSETS } from '../model/collections.js';

/**
 * A media asset's files go when its record goes, whichever way it went (its own delete, a
 * cascade, a hook's repository): on its `deleted` event, after the commit. A failure is retried
 * by the event log like any afterCommit, and the record is never left behind its files. The
 * app's own afterCommit of media assets, if any, runs first, and both run on every attempt.
 */
export function withMediaCleanup(hooks: HookTable, storage: FileStorage): HookTable {
  const own: EntityHooks | undefined = hooks.get(MEDIA_ASSETS);
  const table = new Map(hooks);
  table.set(MEDIA_ASSETS, {
    ...own,
    async afterCommit(args: AfterCommitArgs<Record<string, unknown>, unknown>) {
      let failure: unknown;
      try {
        await own?.afterCommit?.(args);
      } catch (error) {
        failure = error;
      }
      if (args.event === 'deleted') await storage.removeAll(args.id);
      if (failure !== undefined) throw failure;
    },
  });
  return table;
}
