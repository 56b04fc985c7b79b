import type Database from 'better-sqlite3';
import { searchText } from '../common/searchText.js';
import { foldText } from '../common/sortKey.js';
import type { TableLayout } from '../common/tableLayout.js';
import { ident } from '../sql/ident.js';
import { decodeValue } from '../sql/rowCodec.js';

const SQL_TYPES = { text: 'TEXT', int: 'INTEGER', real: 'REAL', bool: 'INTEGER', json: 'TEXT' } as const;

export function ftsTable(layout: TableLayout): string {
  return `${layout.table}__fts`;
}

/**
 * Creates what is missing: tables, columns of fields added since, unique and filter indexes,
 * and the FTS5 search table (rebuilt when the searchable fields change). Never drops data.
 */
export function syncSqliteSchema(db: Database.Database, layout: TableLayout): void {
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
  for (const field of layout.unique) {
    db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${ident(`ux_${layout.table}_${field}`)} ON ${table} (${ident(field)})`);
  }
  // Filters compare the stored value; ordering uses the natural-order key: each gets its own index.
  for (const field of layout.indexed) {
    db.exec(`CREATE INDEX IF NOT EXISTS ${ident(`fx_${layout.table}_${field}`)} ON ${table} (${ident(field)}, "id")`);
  }
  for (const column of layout.columns.values()) {
    if (column.sortKey)
      db.exec(
        `CREATE INDEX IF NOT EXISTS ${ident(`sk_${layout.table}_${column.field}`)} ON ${table} (${ident(column.sortKey)}, "id")`,
      );
  }
  syncSearchTable(db, layout);
}

function syncSearchTable(db: Database.Database, layout: TableLayout): void {
  const fts = ident(ftsTable(layout));
  const current = (db.prepare(`PRAGMA table_info(${fts})`).all() as { name: string }[]).map((c) => c.name);
  const wanted = ['id', ...layout.searchFields];
  if (current.join(',') === wanted.join(',')) return;
  db.exec(`DROP TABLE IF EXISTS ${fts}`);
  if (layout.searchFields.length === 0) return;
  db.exec(
    `CREATE VIRTUAL TABLE ${fts} USING fts5(id UNINDEXED, ${layout.searchFields.map(ident).join(', ')}, ` +
      `tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3')`,
  );
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
