import type { Queryable } from './pgStore.js';
import { ident, type TableLayout } from '../sql/tableLayout.js';

const PG_TYPES = { text: 'TEXT COLLATE "C"', int: 'BIGINT', real: 'DOUBLE PRECISION', bool: 'BOOLEAN', json: 'JSONB' } as const;
export const SEARCH_COLUMN = '_search';

/** ICU collations for explicit sort collations: strength 1-3, with and without numeric ordering. */
export const COLLATIONS = [1, 2, 3].flatMap((strength) =>
  [false, true].map((numeric) => ({
    name: `entigen_s${strength}${numeric ? 'n' : ''}`,
    locale: `und-u-ks-level${strength}${numeric ? '-kn-true' : ''}`,
  })),
);

/** Creates what is missing, as the SQLite adapter does: tables, added columns, indexes, the search index. Never drops data. */
export async function syncPgSchema(client: Queryable, layout: TableLayout): Promise<void> {
  const table = ident(layout.table);
  const definitions: string[] = [];
  for (const column of layout.columns.values()) {
    definitions.push(column.field === 'id' ? `"id" TEXT COLLATE "C" PRIMARY KEY` : `${ident(column.field)} ${PG_TYPES[column.kind]}`);
    if (column.sortKey) definitions.push(`${ident(column.sortKey)} TEXT COLLATE "C"`);
  }
  if (layout.searchFields.length > 0) definitions.push(`"${SEARCH_COLUMN}" TEXT`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${table} (${definitions.join(', ')})`);
  for (const column of layout.columns.values()) {
    await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${ident(column.field)} ${PG_TYPES[column.kind]}`);
    if (column.sortKey) await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${ident(column.sortKey)} TEXT COLLATE "C"`);
  }
  for (const field of layout.unique) {
    await client.query(`CREATE UNIQUE INDEX IF NOT EXISTS ${ident(`ux_${layout.table}_${field}`)} ON ${table} (${ident(field)})`);
  }
  for (const field of layout.indexed) {
    const column = layout.columns.get(field)!;
    const using = column.kind === 'json' ? `USING GIN (${ident(field)})` : `(${ident(field)}, "id")`;
    await client.query(`CREATE INDEX IF NOT EXISTS ${ident(`fx_${layout.table}_${field}`)} ON ${table} ${using}`);
  }
  for (const column of layout.columns.values()) {
    if (column.sortKey) await client.query(`CREATE INDEX IF NOT EXISTS ${ident(`sk_${layout.table}_${column.field}`)} ON ${table} (${ident(column.sortKey)}, "id")`);
  }
  if (layout.searchFields.length > 0) {
    await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS "${SEARCH_COLUMN}" TEXT`);
    await client.query(`CREATE INDEX IF NOT EXISTS ${ident(`ts_${layout.table}`)} ON ${table} USING GIN (to_tsvector('simple', coalesce("${SEARCH_COLUMN}", '')))`);
  }
}
