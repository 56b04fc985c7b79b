import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { DEFAULT_SQLITE_PATH } from '../../runtime/store/openStore.js';

/** What the database the server uses holds of some entities, as `entigen build` asks before refusing a change. */
export type RecordCounts =
  /** No database yet: no SQLite file, no table of the app (a project never served). */
  | { served: false; where: string }
  /** How many records each entity's table holds (0 when it has none, or no table). */
  | { served: true; where: string; counts: Map<string, number> };

/**
 * How many records each of `plurals` holds in the database DATABASE_URL names (the embedded
 * file by default), read without writing anything. Undefined when it cannot be told (MongoDB,
 * or a database that does not answer): then a breaking change needs its migration as always.
 */
export async function recordCounts(
  root: string,
  databaseUrl: string | undefined,
  plurals: readonly string[],
): Promise<RecordCounts | undefined> {
  if (!databaseUrl || databaseUrl.startsWith('sqlite:')) return sqliteCounts(root, databaseUrl, plurals);
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return postgresCounts(databaseUrl, plurals);
  return undefined;
}

async function sqliteCounts(
  root: string,
  databaseUrl: string | undefined,
  plurals: readonly string[],
): Promise<RecordCounts | undefined> {
  const target = databaseUrl ? databaseUrl.slice('sqlite:'.length) : DEFAULT_SQLITE_PATH;
  if (!target || target === ':memory:') return { served: false, where: target || 'sqlite:' };
  const path = isAbsolute(target) ? target : join(root, target);
  if (!existsSync(path)) return { served: false, where: target };
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (row) => row.name,
      ),
    );
    const present = plurals.filter((plural) => tables.has(plural));
    if (present.length === 0) return { served: false, where: target };
    const counts = new Map<string, number>(plurals.map((plural) => [plural, 0]));
    for (const plural of present)
      counts.set(plural, (db.prepare(`SELECT COUNT(*) AS n FROM "${plural}"`).get() as { n: number }).n);
    return { served: true, where: target, counts };
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

async function postgresCounts(databaseUrl: string, plurals: readonly string[]): Promise<RecordCounts | undefined> {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema') ?? 'public';
  url.searchParams.delete('schema');
  const where = `${url.host}${url.pathname}${schema === 'public' ? '' : `, schema ${schema}`}`;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>(
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2)',
      [schema, plurals],
    );
    if (rows.length === 0) return { served: false, where };
    const counts = new Map<string, number>(plurals.map((plural) => [plural, 0]));
    for (const { name } of rows) {
      const quoted = `"${schema.replace(/"/g, '""')}"."${name.replace(/"/g, '""')}"`;
      const counted = await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${quoted}`);
      counts.set(name, Number(counted.rows[0].n));
    }
    return { served: true, where, counts };
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}
