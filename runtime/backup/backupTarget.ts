import { basename, dirname, isAbsolute, resolve } from 'node:path';
import type { S3Settings } from '../config/runtimeConfig.js';
import type { FileStorage } from '../files/fileStorage.js';
import { LocalStorage } from '../files/localStorage.js';
import { S3Storage } from '../files/s3Storage.js';

/** Backup files are named so that their names sort by time. */
export const BACKUP_NAME = /^entigen-backup-\d{8}T\d{6}(\d{3})?Z\.tar\.gz$/;

export function backupName(at: Date): string {
  return `entigen-backup-${at.toISOString().replace(/[-:]/g, '').replace('.', '')}.tar.gz`;
}

/** Where backups go (or come from): a folder or an S3 prefix, as a storage of files, and one file in it. */
export interface BackupPlace {
  storage: FileStorage;
  /** The one backup a path or key names; none: a folder or prefix, where a new name is made. */
  name?: string;
  /** How the place is shown in messages (no credentials). */
  label: string;
}

/**
 * `s3://bucket/prefix/` (a prefix: new backups are named by time), `s3://bucket/prefix/x.tar.gz`
 * (that object), a folder (`backups/`, or an existing directory) or a file (`app.tar.gz`). The
 * S3 server and credentials come from S3_ENDPOINT, S3_REGION, S3_FORCE_PATH_STYLE,
 * S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, as for media.
 */
export function backupPlace(spec: string, root: string, env: NodeJS.ProcessEnv): BackupPlace {
  if (spec.startsWith('s3://')) {
    const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/.*)?$/.exec(spec);
    if (!match) throw new Error(`"${spec}" is not an S3 address: use s3://bucket/prefix/`);
    const path = (match[2] ?? '/').replace(/^\/+/, '');
    const isFile = path.endsWith('.tar.gz');
    const prefix = isFile
      ? path.includes('/')
        ? `${dirname(path)}/`
        : ''
      : path && !path.endsWith('/')
        ? `${path}/`
        : path;
    const endpoint = env.S3_ENDPOINT || undefined;
    const settings: S3Settings = {
      bucket: match[1],
      endpoint,
      region: env.S3_REGION || 'us-east-1',
      prefix,
      forcePathStyle: env.S3_FORCE_PATH_STYLE ? env.S3_FORCE_PATH_STYLE === 'true' : endpoint !== undefined,
      accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
    };
    return { storage: new S3Storage(settings), name: isFile ? basename(path) : undefined, label: spec };
  }
  const path = isAbsolute(spec) ? spec : resolve(root, spec);
  // A backup holds every record and password hash: its folder and file are the owner's alone.
  if (spec.endsWith('.tar.gz'))
    return { storage: new LocalStorage(dirname(path), { ownerOnly: true }), name: basename(path), label: spec };
  return { storage: new LocalStorage(path, { ownerOnly: true }), label: spec };
}

/** The backups in a place, oldest first. */
export async function listBackups(storage: FileStorage): Promise<string[]> {
  const names: string[] = [];
  for await (const key of storage.list()) if (!key.includes('/') && BACKUP_NAME.test(key)) names.push(key);
  return names.sort();
}

/** Keeps the newest `keep` backups of a place; answers the names removed. */
export async function pruneBackups(storage: FileStorage, keep: number): Promise<string[]> {
  const names = await listBackups(storage);
  const old = names.slice(0, Math.max(0, names.length - keep));
  for (const name of old) await storage.remove(name);
  return old;
}
