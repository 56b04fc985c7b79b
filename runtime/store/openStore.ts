import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { SqliteStore } from './sqlite/sqliteStore.js';
import type { Store } from './types.js';

export const DEFAULT_SQLITE_PATH = 'data/entigen.db';

/** A PostgreSQL DATABASE_URL as pg_dump and pg_restore take it (without ?schema=), and its schema. */
export function postgresTarget(databaseUrl: string | undefined): { url: string; schema?: string } | undefined {
  if (!databaseUrl || !/^postgres(ql)?:\/\//.test(databaseUrl)) return undefined;
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  return { url: url.toString(), schema };
}

/**
 * The store DATABASE_URL names: none or `sqlite:PATH` / `sqlite::memory:` for the embedded store,
 * `postgres://...` for PostgreSQL, `mongodb://...` for MongoDB. `announced`: a server opens it,
 * and tells the other instances of its writes itself (on PostgreSQL, the change triggers then
 * stay silent for its connections).
 */
export async function openStore(
  databaseUrl: string | undefined,
  root: string,
  { announced = false }: { announced?: boolean } = {},
): Promise<Store> {
  if (!databaseUrl || databaseUrl.startsWith('sqlite:')) {
    const target = databaseUrl ? databaseUrl.slice('sqlite:'.length) : DEFAULT_SQLITE_PATH;
    if (target === ':memory:') return SqliteStore.open(':memory:');
    if (!target) throw new Error('DATABASE_URL sqlite: needs a path, as in sqlite:data/app.db or sqlite::memory:');
    const path = isAbsolute(target) ? target : join(root, target);
    // The database holds every record and password hash: a new file and its folder are the owner's
    // alone (SQLite gives its -wal and -shm files the database file's mode).
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
    return SqliteStore.open(path);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    // `?schema=NAME` keeps the app's tables in their own schema (created when missing).
    const url = new URL(databaseUrl);
    const schema = url.searchParams.get('schema') ?? undefined;
    url.searchParams.delete('schema');
    if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
      throw new Error(
        `DATABASE_URL ?schema=${schema} is not a plain schema name (letters, digits and _, not starting with a digit, at most 63)`,
      );
    }
    // Drivers load only when their store is used: starting on SQLite skips pg and mongodb.
    const { PgStore } = await import('./postgres/pgStore.js');
    return PgStore.open(url.toString(), { schema, max: Number(process.env.DATABASE_POOL_MAX ?? 10), announced });
  }
  if (/^mongodb(\+srv)?:\/\//.test(databaseUrl)) {
    const { MongoStore } = await import('./mongo/mongoStore.js');
    return MongoStore.open(databaseUrl, { maxPoolSize: Number(process.env.DATABASE_POOL_MAX ?? 10) });
  }
  const scheme = databaseUrl.split(':')[0];
  throw new Error(
    `DATABASE_URL scheme "${scheme}:" is not supported; use sqlite:PATH, sqlite::memory:, postgres://... or mongodb://...`,
  );
}
