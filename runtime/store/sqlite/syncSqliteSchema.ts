import type Database from 'better-sqlite3';
import { indexesFor } from '../common/indexPlan.js';
import { searchText } from '../common/searchText.js';
import { foldText } from '../common/sortKey.js';
import type { TableLayout } from '../common/tableLayout.js';
import { ident } from '../sql/ident.js';
import { decodeValue } from '../sql/rowCodec.js';
import type { SchemaChanges } from '../types.js';

const SQL_TYPES = { text: 'TEXT', int: 'INTEGER', real: 'REAL', bool: 'INTEGER', json: 'TEXT' } as const;

export function ftsTable(layout: TableLayout): string {
  return `${layout.table}__fts`;
}

/** FTS5's own table of the indexed rows: `id` its rowid, `c0` the record id, then the text columns. */
export function ftsContentTable(layout: TableLayout): string {
  return `${ftsTable(layout)}_content`;
}

/**
 * Creates what is missing: tables, columns of fields added since, unique indexes, the planned
 * indexes (dropping those no longer planned), and the FTS5 search table (rebuilt when the
 * searchable fields change). Never drops data. Answers the indexes it added and dropped.
 */
export function syncSqliteSchema(db: Database.Database, layout: TableLayout): SchemaChanges {
  const table = ident(layout.table);
  const definitions: string[] = [];
  for (const column of layout.columns.values()) {
    definitions.push(
      column.field === 'id' ? `"id" TEXT PRIMARY KEY NOT NULL` : `${ident(column.field)} ${SQL_TYPES[column.kind]}`,
    );
    if (column.sortKey) definitions.push(`${ident(column.sortKey)} TEXT`);
    if (column.fold) definitions.push(`${ident(column.fold)} TEXT`);
  }
  db.exec(`CREATE TABLE IF NOT EXISTS ${table} (${definitions.join(', ')})`);

  const existing = new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
  for (const column of layout.columns.values()) {
    if (!existing.has(column.field))
      db.exec(`ALTER TABLE ${table} ADD COLUMN ${ident(column.field)} ${SQL_TYPES[column.kind]}`);
    if (column.sortKey && !existing.has(column.sortKey)) {
      db.exec(`ALTER TABLE ${table} ADD COLUMN ${ident(column.sortKey)} TEXT`);
    }
    if (column.fold && !existing.has(column.fold)) {
      db.exec(`ALTER TABLE ${table} ADD COLUMN ${ident(column.fold)} TEXT`);
      // A field that became a filter: its stored values get their folded text at once.
      const fill = db.prepare(`UPDATE ${table} SET ${ident(column.fold)} = ? WHERE "id" = ?`);
      const rows = db
        .prepare(`SELECT "id", ${ident(column.field)} AS value FROM ${table} WHERE ${ident(column.field)} IS NOT NULL`)
        .all() as { id: string; value: unknown }[];
      db.transaction(() => {
        for (const row of rows) if (typeof row.value === 'string') fill.run(foldText(row.value), row.id);
      })();
    }
  }
  // Per tenant, records without one counting as one tenant (NULLs would never conflict).
  const within = layout.uniqueWithin ? `coalesce(${ident(layout.uniqueWithin)}, ''), ` : '';
  for (const field of layout.unique) {
    const name = `ux_${layout.table}_${field}`;
    const current = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`).get(name) as
      | { sql: string }
      | undefined;
    // An index of another scope (made before the entity became tenant-scoped, or after it stopped) is rebuilt.
    if (current && current.sql.includes('coalesce(') !== (within !== '')) db.exec(`DROP INDEX ${ident(name)}`);
    db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${ident(name)} ON ${table} (${within}${ident(field)})`);
  }
  const indexes = syncIndexes(db, layout);
  syncSearchTable(db, layout);
  const added = layout.searchFields.length > 0 ? addSearchIdIndex(db, layout) : undefined;
  if (added) indexes.added.push(added);
  return indexes;
}

/**
 * The index on the FTS5 content table's `id` column (its first, `c0`), so updates and deletes find
 * a record's text entry by id rather than by reading every entry (11 ms per write at 100,000).
 * Answers its name when it was missing and is added now.
 */
function addSearchIdIndex(db: Database.Database, layout: TableLayout): string | undefined {
  const name = `${ftsContentTable(layout)}_id`;
  if (db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?`).get(name)) return undefined;
  db.exec(`CREATE INDEX ${ident(name)} ON ${ident(ftsContentTable(layout))} (c0)`);
  return name;
}

/**
 * Names of indexes entigen made under earlier plans (`fx_`: one per filter, `sk_`: one per text
 * field's sort key) or this one (`ix_`): those the plan no longer has are dropped.
 */
const MANAGED_PREFIXES = ['ix_', 'fx_', 'sk_'];

/** The planned indexes SQLite keeps, added and dropped to match. */
function syncIndexes(db: Database.Database, layout: TableLayout): SchemaChanges {
  const table = ident(layout.table);
  const existing = new Set(
    (
      db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`).all(layout.table) as {
        name: string;
      }[]
    ).map((row) => row.name),
  );
  const planned = indexesFor(layout.indexes, 'sqlite');
  const changes: SchemaChanges = { added: [], dropped: [] };
  for (const index of planned) {
    if (existing.has(index.name)) continue;
    // SQLite checks a partial index's condition again unless its column is in the index: the
    // archived flag goes last, so counts read the index alone.
    const columns = index.live ? [...index.columns, 'archivedAt'] : index.columns;
    db.exec(
      `CREATE INDEX ${ident(index.name)} ON ${table} (${columns.map(ident).join(', ')})${index.live ? ' WHERE "archivedAt" IS NULL' : ''}`,
    );
    changes.added.push(index.name);
  }
  const keep = new Set(planned.map((index) => index.name));
  for (const name of existing) {
    if (keep.has(name) || !MANAGED_PREFIXES.some((prefix) => name.startsWith(`${prefix}${layout.table}_`))) continue;
    db.exec(`DROP INDEX ${ident(name)}`);
    changes.dropped.push(name);
  }
  return changes;
}

function syncSearchTable(db: Database.Database, layout: TableLayout): void {
  const fts = ident(ftsTable(layout));
  const current = (db.prepare(`PRAGMA table_info(${fts})`).all() as { name: string }[]).map((c) => c.name);
  const wanted = ['id', ...layout.searchFields];
  if (current.join(',') === wanted.join(',')) {
    mergeLessOften(db, layout);
    return;
  }
  db.exec(`DROP TABLE IF EXISTS ${fts}`);
  if (layout.searchFields.length === 0) return;
  // No table of each entry's token counts (columnsize = 0): only ranking reads them, and searches
  // here match word prefixes without ranking. A table made before keeps its counts and works alike.
  db.exec(
    `CREATE VIRTUAL TABLE ${fts} USING fts5(id UNINDEXED, ${layout.searchFields.map(ident).join(', ')}, ` +
      `tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3', columnsize = 0)`,
  );
  mergeLessOften(db, layout);
  // Existing records become searchable at once.
  const columns = layout.searchFields.map(ident).join(', ');
  const insert = db.prepare(
    `INSERT INTO ${fts} (id, ${columns}) VALUES (?, ${layout.searchFields.map(() => '?').join(', ')})`,
  );
  for (const row of db.prepare(`SELECT "id", ${columns} FROM ${ident(layout.table)}`).iterate() as Iterable<
    Record<string, unknown>
  >) {
    insert.run(row.id, ...layout.searchFields.map((f) => searchText(decodeValue(layout.columns.get(f)!.kind, row[f]))));
  }
}

/**
 * FTS5 merges the segments of a level (one per commit at first) once it holds `automerge` of
 * them; 4 by default. At 8 a commit rewrites half as many index pages (a group of creates wrote
 * 7.3 pages of the text index's data at 4, 3.6 at 8) for somewhat more segments a search reads.
 */
const AUTOMERGE = 8;

function mergeLessOften(db: Database.Database, layout: TableLayout): void {
  const config = ident(`${ftsTable(layout)}_config`);
  const row = db.prepare(`SELECT v FROM ${config} WHERE k = 'automerge'`).get() as { v: unknown } | undefined;
  if (Number(row?.v) === AUTOMERGE) return;
  const fts = ident(ftsTable(layout));
  // A literal: FTS5 takes only an integer, and a bound number arrives as a real.
  db.exec(`INSERT INTO ${fts} (${fts}, rank) VALUES ('automerge', ${AUTOMERGE})`);
}
