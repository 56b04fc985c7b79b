import { isAbsolute, resolve } from 'node:path';
import { backupName, backupPlace, listBackups, pruneBackups } from '../../runtime/backup/backupTarget.js';
import { restoreBackup } from '../../runtime/backup/restoreBackup.js';
import { takeBackup } from '../../runtime/backup/takeBackup.js';
import { openFileStorage } from '../../runtime/files/mediaFiles.js';
import { MEDIA_ASSETS } from '../../runtime/model/collections.js';
import { DEFAULT_SQLITE_PATH, openStore, postgresTarget } from '../../runtime/store/openStore.js';
import { loadCheckedConfig } from './checkConfigFile.js';
import { openCommandStore } from './commandContext.js';
import { progressLine } from './progressLine.js';
import { reportFailure } from './reportFailure.js';
import { loadRegistry } from './serveCommand.js';

export interface BackupOptions {
  to?: string;
  logical?: boolean;
  keep?: string;
  out: string;
}

export interface RestoreOptions {
  out: string;
}

/** `entigen backup`: a consistent copy of the database and the media files, while the server runs. */
export async function backupCommand(options: BackupOptions): Promise<void> {
  try {
    const root = resolve('.');
    const config = loadCheckedConfig(root, 'no backup taken', process.env);
    const registry = await loadRegistry(root, options.out);
    const keep = options.keep === undefined ? undefined : Number(options.keep);
    if (keep !== undefined && (!Number.isInteger(keep) || keep < 1 || keep > 10_000))
      throw new Error('--keep must be a whole number from 1 to 10000');
    const place = backupPlace(options.to ?? config.backups?.to ?? 'backups/', root, process.env);
    const store = await openCommandStore(root, registry.model);
    const media = registry.entities.has(MEDIA_ASSETS) ? openFileStorage(config.uploads, root) : undefined;
    const started = Date.now();
    const progress = progressLine();
    try {
      await store.init(registry.model);
      const name = place.name ?? backupName(new Date());
      const manifest = await takeBackup({
        store,
        model: registry.model,
        media,
        target: place.storage,
        name,
        postgres: postgresTarget(process.env.DATABASE_URL),
        logical: options.logical,
        progress: (step, done, total) => progress.show(`${step} ${done}/${total}`),
        now: () => new Date(),
      });
      progress.done();
      const pruned = keep !== undefined ? await pruneBackups(place.storage, keep) : [];
      const bytes = manifest.files.reduce((sum, file) => sum + file.size, 0);
      process.stdout.write(
        `entigen: backup ${name} written to ${place.label} in ${((Date.now() - started) / 1000).toFixed(1)} s: the ${manifest.store} database (${manifest.database}), ${manifest.files.length} media files (${bytes} bytes)${pruned.length ? `; removed ${pruned.length} older backup(s)` : ''}\n`,
      );
    } finally {
      await store.close();
      await media?.close();
      await place.storage.close();
    }
  } catch (error) {
    reportFailure(error);
  }
}

/**
 * `entigen restore <from>`: a backup into the empty database DATABASE_URL names, and its media
 * files into the configured storage. `<from>` is a backup file or object, or a folder or S3 prefix
 * (its newest backup).
 */
export async function restoreCommand(from: string, options: RestoreOptions): Promise<void> {
  try {
    const root = resolve('.');
    const config = loadCheckedConfig(root, 'nothing restored', process.env);
    const registry = await loadRegistry(root, options.out);
    const place = backupPlace(from, root, process.env);
    const media = registry.entities.has(MEDIA_ASSETS) ? openFileStorage(config.uploads, root) : undefined;
    const url = process.env.DATABASE_URL;
    const progress = progressLine();
    try {
      const name = place.name ?? (await listBackups(place.storage)).at(-1);
      if (!name) throw new Error(`${place.label} holds no backup`);
      const archive = await place.storage.get(name);
      if (!archive) throw new Error(`${place.label}: no backup named ${name}`);
      // The backup's rows go back as they were stored: the adapter itself, not the records' stack.
      const open = () => openStore(url, root);
      const postgres = postgresTarget(url);
      const target = postgres
        ? { kind: 'postgres' as const, ...postgres, open }
        : url?.startsWith('mongodb')
          ? { kind: 'mongo' as const, open }
          : { kind: 'sqlite' as const, path: sqlitePath(url, root), open };
      const outcome = await restoreBackup({
        archive: archive.body,
        model: registry.model,
        target,
        media,
        progress: (step, done, total) => progress.show(`${step} ${done}/${total}`),
      });
      progress.done();
      const records = Object.values(outcome.records).reduce((sum, n) => sum + n, 0);
      process.stdout.write(
        `entigen: restored ${name} (taken ${outcome.manifest.createdAt}): ${records} records, ${outcome.files} media files\n`,
      );
    } finally {
      await media?.close();
      await place.storage.close();
    }
  } catch (error) {
    reportFailure(error);
  }
}

function sqlitePath(url: string | undefined, root: string): string {
  const target = url ? url.slice('sqlite:'.length) : DEFAULT_SQLITE_PATH;
  if (target === ':memory:') throw new Error('a restore needs a database file, not sqlite::memory:');
  return isAbsolute(target) ? target : resolve(root, target);
}
