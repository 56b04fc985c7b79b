import { createReadStream, createWriteStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { FileStorage } from '../files/fileStorage.js';
import type { AppModel } from '../model/types.js';
import type { Doc, Store } from '../store/types.js';
import { type BackupManifest, run } from './takeBackup.js';

export interface RestoreInput {
  /** The archive, as a stream (a file or an S3 object). */
  archive: Readable;
  model: AppModel;
  /** Where the database goes. A SQLite file is written to `sqlitePath` before the store opens. */
  target:
    | { kind: 'sqlite'; path: string; open(): Promise<Store> }
    | { kind: 'postgres'; url: string; schema?: string; open(): Promise<Store> }
    | { kind: 'mongo'; open(): Promise<Store> };
  /** Where media files go (the app's configured storage). */
  media?: FileStorage;
  progress?: (step: 'database' | 'files', done: number, total: number) => void;
}

export interface RestoreOutcome {
  manifest: BackupManifest;
  records: Record<string, number>;
  files: number;
}

const BATCH = 500;

/**
 * Restores a backup into an empty database (refused otherwise: a restore never mixes two
 * states), then its media files. A SQLite file copy restores only to SQLite, a pg_dump only to
 * PostgreSQL into a schema of the same name; a logical backup restores to any store.
 */
export async function restoreBackup(input: RestoreInput): Promise<RestoreOutcome> {
  try {
    return await restoreArchive(input);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (
      code === 'Z_DATA_ERROR' ||
      code === 'Z_BUF_ERROR' ||
      /Invalid tar header|Unexpected end of data/.test(String(error))
    )
      throw new Error('this is not an entigen backup: not a whole .tar.gz archive');
    throw error;
  }
}

async function restoreArchive(input: RestoreInput): Promise<RestoreOutcome> {
  const work = mkdtempSync(join(tmpdir(), 'entigen-restore-'));
  try {
    const extract = (await import('tar-stream')).default.extract();
    const reading = pipeline(input.archive, createGunzip(), extract);
    // Its failure also ends the loop below, which reports it.
    reading.catch(() => undefined);
    let manifest: BackupManifest | undefined;
    const parts = new Map<string, string>();
    let files = 0;
    let databaseDone = false;
    // The database goes in before the first file (the archive holds it first), or at the end.
    const database = async (manifest: BackupManifest) => {
      if (databaseDone) return;
      databaseDone = true;
      await restoreDatabase(manifest, parts, input);
    };
    for await (const entry of extract) {
      // tar-stream's entries are streamx streams; the AWS SDK takes Node's own.
      const item = Readable.from(entry as AsyncIterable<Buffer>);
      const name = entry.header.name;
      if (name === 'manifest.json') {
        manifest = JSON.parse((await text(item)).toString('utf8')) as BackupManifest;
        if (manifest.format !== 'entigen-backup' || manifest.version !== 1)
          throw new Error('this is not an entigen backup (or one of a later version)');
        refuseMismatch(manifest, input);
        continue;
      }
      if (!manifest) throw new Error('the backup has no manifest first; it is damaged');
      if (name.startsWith('database/')) {
        const part = name.slice('database/'.length);
        if (!/^[\w.-]+$/.test(part)) throw new Error(`the backup holds an odd database part: ${name}`);
        const path = join(work, part);
        await pipeline(item, createWriteStream(path));
        parts.set(part, path);
        continue;
      }
      if (name.startsWith('files/')) {
        if (!input.media) {
          item.resume();
          continue;
        }
        await database(manifest);
        const key = name.slice('files/'.length);
        await input.media.put(key, item, 'application/octet-stream');
        input.progress?.('files', ++files, manifest.files.length);
        continue;
      }
      item.resume();
    }
    await reading;
    if (!manifest) throw new Error('the backup is empty');
    await database(manifest);
    const store = await input.target.open();
    try {
      await store.init(input.model);
      const records: Record<string, number> = {};
      for (const entity of input.model.entities) records[entity.plural] = await store.count(entity.plural, {});
      return { manifest, records, files };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function restoreDatabase(manifest: BackupManifest, parts: Map<string, string>, input: RestoreInput) {
  const { target } = input;
  if (manifest.database === 'sqlite-file') {
    if (target.kind !== 'sqlite')
      throw new Error('a SQLite file backup restores to SQLite only; take it with --logical');
    if (existsSync(target.path) && statSync(target.path).size > 0)
      throw new Error(`${target.path} exists: restore into a new database file`);
    await pipeline(createReadStream(parts.get('entigen.db')!), createWriteStream(target.path, { mode: 0o600 }));
    input.progress?.('database', 1, 1);
    return;
  }
  if (manifest.database === 'pg-dump') {
    if (target.kind !== 'postgres')
      throw new Error('a pg_dump backup restores to PostgreSQL only; take it with --logical');
    await requireEmptySchema(target.url, target.schema ?? 'public');
    // The schema holds no tables (checked above): --clean drops the empty schema the dump creates again.
    await run('pg_restore', [
      '--no-owner',
      '--no-privileges',
      '--clean',
      '--if-exists',
      '--exit-on-error',
      `--dbname=${target.url}`,
      parts.get('database.pgdump')!,
    ]);
    input.progress?.('database', 1, 1);
    return;
  }
  const store = await target.open();
  try {
    await store.init(input.model);
    await requireEmpty(store, input.model);
    const collections = Object.keys(manifest.records);
    for (const [index, collection] of collections.entries()) {
      const path = parts.get(`${collection}.jsonl`);
      if (!path) throw new Error(`the backup is missing ${collection}`);
      let batch: Doc[] = [];
      for await (const line of createInterface({
        input: createReadStream(path),
        crlfDelay: Number.POSITIVE_INFINITY,
      })) {
        if (!line) continue;
        batch.push(JSON.parse(line) as Doc);
        if (batch.length === BATCH) {
          await store.insertMany(collection, batch);
          batch = [];
        }
      }
      if (batch.length > 0) await store.insertMany(collection, batch);
      input.progress?.('database', index + 1, collections.length);
    }
  } finally {
    await store.close();
  }
}

/** A restore goes into a database with no records at all. */
async function requireEmpty(store: Store, model: AppModel): Promise<void> {
  for (const entity of model.entities) {
    if ((await store.count(entity.plural, {})) > 0)
      throw new Error(
        `the database already holds ${entity.plural}: restore into an empty database (a new file, schema or database)`,
      );
  }
}

/** A pg_dump goes into a schema with no tables (or none yet). */
async function requireEmptySchema(url: string, schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1',
      [schema],
    );
    if (rows[0].n > 0)
      throw new Error(`the schema ${schema} already has tables: restore into an empty schema or a new database`);
  } finally {
    await client.end();
  }
}

function refuseMismatch(manifest: BackupManifest, input: RestoreInput): void {
  if (manifest.app !== input.model.app.name)
    throw new Error(`the backup is of the app "${manifest.app}", not "${input.model.app.name}"`);
  if (manifest.database === 'pg-dump' && input.target.kind === 'postgres' && manifest.schema !== input.target.schema)
    throw new Error(
      `the backup is a pg_dump of the schema ${manifest.schema ?? 'public'}: restore into DATABASE_URL ?schema=${manifest.schema ?? 'public'}, or take the backup with --logical`,
    );
}

async function text(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
