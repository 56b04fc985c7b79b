import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type tar from 'tar-stream';
import { assetIdOf, type FileStorage } from '../files/fileStorage.js';
import type { AppModel } from '../model/types.js';
import { adapterOf } from '../store/storeWrapper.js';
import type { Doc, Store } from '../store/types.js';

/** What a backup holds, first in its archive: restore reads it before anything else. */
export interface BackupManifest {
  format: 'entigen-backup';
  version: 1;
  createdAt: string;
  app: string;
  /** The store the backup was taken from, and how its database is kept in the archive. */
  store: Store['kind'];
  database: 'sqlite-file' | 'pg-dump' | 'logical';
  /** PostgreSQL: the schema the dump holds (a pg-dump restores into a schema of the same name). */
  schema?: string;
  /** Records per collection when the backup was taken (logical backups; the others hold the file). */
  records: Record<string, number>;
  /** Media files: their keys and sizes. */
  files: { key: string; size: number }[];
}

export type BackupProgress = (step: 'database' | 'files' | 'upload', done: number, total: number) => void;

export interface TakeBackupInput {
  store: Store;
  model: AppModel;
  /** The media storage, when the app has media assets: its files go in too. */
  media?: FileStorage;
  /** Where the archive goes, under `name`. */
  target: FileStorage;
  name: string;
  /** PostgreSQL's connection string (pg_dump needs it), without ?schema=. */
  postgres?: { url: string; schema?: string };
  /** A logical export even where the store has a file copy or pg_dump: portable between stores. */
  logical?: boolean;
  progress?: BackupProgress;
  now(): Date;
}

const PAGE = 1000;

const isMediaKey = (key: string) => assetIdOf(key) !== undefined || /^\d{4}-\d{2}\/[^/]+$/.test(key);

/** Whether pg_dump is on the PATH. */
export function hasPgDump(): boolean {
  return spawnSync('pg_dump', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Takes a backup while the server runs and writes it to the target as one .tar.gz: the manifest,
 * the database (SQLite: its online backup API, a consistent copy taken a few pages at a time, so
 * writers wait only moments; PostgreSQL: pg_dump when it is installed, else a logical export in
 * one REPEATABLE READ snapshot; MongoDB: a logical export), then every media file. Files are
 * listed after the database is copied, so every media record in the copy has its file.
 */
export async function takeBackup(input: TakeBackupInput): Promise<BackupManifest> {
  const work = mkdtempSync(join(tmpdir(), 'entigen-backup-'));
  try {
    const { kind, parts, records, schema } = await copyDatabase(input, work);
    const files: BackupManifest['files'] = [];
    if (input.media) {
      for await (const key of input.media.list()) {
        // Only media: the files of assets (and the month folders of earlier versions), never other
        // things in the same folder or prefix, such as backups written there.
        if (!isMediaKey(key)) continue;
        const size = await input.media.size(key);
        if (size !== undefined) files.push({ key, size });
      }
      files.sort((a, b) => a.key.localeCompare(b.key));
    }
    const manifest: BackupManifest = {
      format: 'entigen-backup',
      version: 1,
      createdAt: input.now().toISOString(),
      app: input.model.app.name,
      store: input.store.kind,
      database: kind,
      ...(schema ? { schema } : {}),
      records,
      files,
    };
    // tar-stream is loaded by the first backup, not by every server at start.
    const pack = (await import('tar-stream')).default.pack();
    const archive = new PassThrough();
    const written = input.target.put(input.name, archive, 'application/gzip');
    const packed = pipeline(pack, createGzip(), archive);
    // A target that fails stops the packing at once, rather than leaving it waiting for a reader.
    const failed = Promise.race([written, packed]).then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => {
        pack.destroy(error as Error);
        throw error;
      },
    );
    const step = <T>(work: Promise<T>) => Promise.race([work, failed]);
    try {
      await step(entry(pack, 'manifest.json', Buffer.from(JSON.stringify(manifest, null, 2))));
      for (const part of parts) {
        await step(streamEntry(pack, `database/${part.name}`, statSync(part.path).size, createReadStream(part.path)));
      }
      let done = 0;
      for (const file of files) {
        const stored = await input.media!.get(file.key);
        if (!stored) throw new Error(`the media file ${file.key} went away during the backup`);
        await step(streamEntry(pack, `files/${file.key}`, file.size, stored.body));
        input.progress?.('files', ++done, files.length);
      }
      pack.finalize();
      await Promise.all([packed, written]);
    } catch (error) {
      pack.destroy();
      archive.destroy();
      await written.catch(() => undefined);
      // Nothing half-written stays in the target.
      await input.target.remove(input.name).catch(() => undefined);
      throw error;
    }
    return manifest;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

interface DatabaseCopy {
  kind: BackupManifest['database'];
  parts: { name: string; path: string }[];
  records: Record<string, number>;
  schema?: string;
}

async function copyDatabase(input: TakeBackupInput, work: string): Promise<DatabaseCopy> {
  // The database as it is: a restore writes these rows back as they were stored.
  const store = adapterOf(input.store);
  if (!input.logical && store.kind === 'sqlite' && store.backupFile) {
    const path = join(work, 'entigen.db');
    await store.backupFile(path, (done, total) => input.progress?.('database', done, total));
    return { kind: 'sqlite-file', parts: [{ name: 'entigen.db', path }], records: {} };
  }
  if (!input.logical && store.kind === 'postgres' && input.postgres && hasPgDump()) {
    const path = join(work, 'database.pgdump');
    await pgDump(input.postgres, path);
    input.progress?.('database', 1, 1);
    return { kind: 'pg-dump', parts: [{ name: 'database.pgdump', path }], records: {}, schema: input.postgres.schema };
  }
  const read = (view: Store) => logicalExport(view, input.model, work, input.progress);
  const { parts, records } = store.snapshot ? await store.snapshot(read) : await read(store);
  return { kind: 'logical', parts, records };
}

/** Every collection of the model as JSON lines, in id order, a page at a time. */
async function logicalExport(
  store: Store,
  model: AppModel,
  work: string,
  progress?: BackupProgress,
): Promise<Pick<DatabaseCopy, 'parts' | 'records'>> {
  const parts: DatabaseCopy['parts'] = [];
  const records: Record<string, number> = {};
  const collections = model.entities.map((entity) => entity.plural).sort();
  for (const [index, collection] of collections.entries()) {
    const path = join(work, `${collection}.jsonl`);
    const out = createWriteStream(path, { mode: 0o600 });
    let count = 0;
    for await (const doc of everyRecord(store, collection)) {
      if (!out.write(`${JSON.stringify(doc)}\n`)) await once(out, 'drain');
      count++;
    }
    out.end();
    await once(out, 'close');
    parts.push({ name: `${collection}.jsonl`, path });
    records[collection] = count;
    progress?.('database', index + 1, collections.length);
  }
  return { parts, records };
}

/** Every record of a collection, in id order, a page at a time (past the last id seen). */
export async function* everyRecord(store: Store, collection: string): AsyncIterable<Doc> {
  let after: string | undefined;
  for (;;) {
    const page = await store.find(collection, {
      ...(after ? { where: { field: 'id', op: 'gt', value: after } } : {}),
      sort: [{ field: 'id', direction: 'asc' }],
      limit: PAGE,
    });
    yield* page;
    if (page.length < PAGE) return;
    after = page[page.length - 1].id;
  }
}

function pgDump(postgres: { url: string; schema?: string }, path: string): Promise<void> {
  const args = ['--format=custom', '--no-owner', '--no-privileges', `--file=${path}`];
  if (postgres.schema) args.push(`--schema=${postgres.schema}`);
  args.push(`--dbname=${postgres.url}`);
  return run('pg_dump', args);
}

export function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} failed (${code}): ${stderr.trim().slice(0, 2000)}`)),
    );
  });
}

function entry(pack: tar.Pack, name: string, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) =>
    pack.entry({ name, size: body.length }, body, (error) => (error ? reject(error) : resolve())),
  );
}

/** One archive entry streamed from `body`; tar needs its size first. */
async function streamEntry(pack: tar.Pack, name: string, size: number, body: Readable): Promise<void> {
  let settled!: (error?: Error | null) => void;
  const finished = new Promise<void>((resolve, reject) => (settled = (error) => (error ? reject(error) : resolve())));
  const sink = pack.entry({ name, size }, (error) => settled(error));
  await pipeline(body, sink);
  await finished;
}
