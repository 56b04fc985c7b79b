import { isAbsolute, resolve } from 'node:path';
import type { UploadsConfig } from '../config/runtimeConfig.js';
import type { AfterCommitArgs, EntityHooks, HookTable } from '../hooks/hookTypes.js';
import { MEDIA_ASSETS } from '../model/collections.js';
import type { FileStorage } from './fileStorage.js';
import { LocalStorage } from './localStorage.js';
import { S3Storage } from './s3Storage.js';
import { Thumbnails } from './thumbnails.js';

/** The media feature's files: where they live, their thumbnails, and the bounds of an upload. */
export interface MediaFiles {
  storage: FileStorage;
  thumbnails: Thumbnails;
  /** The thumbnail sizes a request may ask for (`200x200`). */
  sizes: readonly string[];
  maxBytes: number;
}

/** The storage uploads.driver names: the folder (relative to the project) or the bucket. */
export function openFileStorage(config: UploadsConfig, root: string): FileStorage {
  if (config.driver === 's3' && config.s3) return new S3Storage(config.s3);
  return new LocalStorage(isAbsolute(config.dir) ? config.dir : resolve(root, config.dir));
}

export function mediaFiles(config: UploadsConfig, root: string): MediaFiles {
  const storage = openFileStorage(config, root);
  return { storage, thumbnails: new Thumbnails(storage), sizes: config.thumbnails.sizes, maxBytes: config.maxBytes };
}

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
