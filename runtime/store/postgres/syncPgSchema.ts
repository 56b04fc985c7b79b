import type pg from 'pg';
import { indexesFor } from '../common/indexPlan.js';
import { foldText } from '../common/sortKey.js';
import type { TableLayout } from '../common/tableLayout.js';
import { ident } from '../sql/ident.js';
import type { SchemaChanges } from '../types.js';

/** What the store needs of a connection: one query at a time. */
export interface Queryable {
  query(sql: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult>;
}

const PG_TYPES = {
  text: 'TEXT COLLATE "C"',
  int: 'BIGINT',
  real: 'DOUBLE PRECISION',
  bool: 'BOOLEAN',
  json: 'JSONB',
} as const;
export const SEARCH_COLUMN = '_search';
/** How a unique index held per tenant shows in its definition (pg_indexes spells COALESCE so). */
const TENANT_KEY = 'COALESCE("tenantId"';

/** ICU collations for explicit sort collations: strength 1-3, with and without numeric ordering. */
export const COLLATIONS = [1, 2, 3].flatMap((strength) =>
  [false, true].map((numeric) => ({
    name: `entigen_s${strength}${numeric ? 'n' : ''}`,
    locale: `und-u-ks-level${strength}${numeric ? '-kn-true' : ''}`,
  })),
);

/** Creates what is missing, as the SQLite adapter does: tables, added columns, indexes, the search index. Never drops data. */
export async function syncPgSchema(client: Queryable, layout: TableLayout): Promise<SchemaChanges> {
  const table = ident(layout.table);
  const definitions: string[] = [];
  for (const column of layout.columns.values()) {
    definitions.push(
      column.field === 'id' ? `"id" TEXT COLLATE "C" PRIMARY KEY` : `${ident(column.field)} ${PG_TYPES[column.kind]}`,
    );
    if (column.sortKey) definitions.push(`${ident(column.sortKey)} TEXT COLLATE "C"`);
    if (column.fold) definitions.push(`${ident(column.fold)} TEXT COLLATE "C"`);
  }
  if (layout.searchFields.length > 0) definitions.push(`"${SEARCH_COLUMN}" TEXT`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${table} (${definitions.join(', ')})`);
  // Only what is missing is altered: ALTER TABLE locks the table against every reader, even when
  // it changes nothing, and other instances may be serving from it.
  const present = await existingColumns(client, layout.table);
  const addColumn = async (name: string, type: string) => {
    if (!present.has(name)) await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${ident(name)} ${type}`);
  };
  for (const column of layout.columns.values()) {
    await addColumn(column.field, PG_TYPES[column.kind]);
    if (column.sortKey) await addColumn(column.sortKey, 'TEXT COLLATE "C"');
    if (column.fold && !present.has(column.fold)) await addFoldColumn(client, layout.table, column.field, column.fold);
  }
  const existing = await existingIndexes(client, layout.table);
  /**
   * `shape` is what the index definition must contain (`md5(`, `USING hash`, `USING btree`), and
   * `scoped` whether it must hold per tenant; an older shape is rebuilt.
   */
  const ensure = async (name: string, unique: boolean, definition: string, shape: string, scoped = false) => {
    const current = existing.get(name);
    if (current?.includes(shape) && current.includes(TENANT_KEY) === scoped) return;
    if (current !== undefined) await client.query(`DROP INDEX IF EXISTS ${ident(name)}`);
    await client.query(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(name)} ON ${table} ${definition}`);
  };
  // Per tenant, records without one counting as one tenant (NULLs would never conflict).
  const within = layout.uniqueWithin ? `COALESCE(${ident(layout.uniqueWithin)}, ''), ` : '';
  const scoped = within !== '';
  for (const field of layout.unique) {
    // A btree holds whole values and refuses rows over ~2.7 kB: long text is unique by its digest, found by a hash index.
    if (layout.columns.get(field)?.longText) {
      await ensure(`ux_${layout.table}_${field}`, true, `(${within}md5(${ident(field)}))`, 'md5(', scoped);
      await ensure(`hx_${layout.table}_${field}`, false, `USING hash (${ident(field)})`, 'USING hash');
    } else await ensure(`ux_${layout.table}_${field}`, true, `(${within}${ident(field)})`, 'USING btree', scoped);
  }
  const changes = await syncIndexes(client, layout, existing);
  if (layout.searchFields.length > 0) {
    await addColumn(SEARCH_COLUMN, 'TEXT');
    await client.query(
      `CREATE INDEX IF NOT EXISTS ${ident(`ts_${layout.table}`)} ON ${table} USING GIN (to_tsvector('simple', coalesce("${SEARCH_COLUMN}", '')))`,
    );
  }
  return changes;
}

/** Names of indexes entigen made under earlier plans (`fx_`, `sk_`) or this one (`ix_`); unplanned ones are dropped. */
const MANAGED_PREFIXES = ['ix_', 'fx_', 'sk_'];

/**
 * The planned indexes. Btree columns are NULLS FIRST, so that a scan either way gives the
 * list's order (nulls first ascending, last descending) without a sort; the id, never null and
 * ordered without a NULLS clause, keeps the default.
 */
async function syncIndexes(
  client: Queryable,
  layout: TableLayout,
  existing: Map<string, string>,
): Promise<SchemaChanges> {
  const table = ident(layout.table);
  const changes: SchemaChanges = { added: [], dropped: [] };
  const planned = indexesFor(layout.indexes, 'postgres');
  for (const index of planned) {
    if (existing.has(index.name)) continue;
    const definition =
      index.method === 'btree'
        ? `(${index.columns.map((c) => (c === 'id' ? '"id"' : `${ident(c)} NULLS FIRST`)).join(', ')})`
        : `USING ${index.method} (${index.columns.map(ident).join(', ')})`;
    await client.query(
      `CREATE INDEX ${ident(index.name)} ON ${table} ${definition}${index.live ? ' WHERE "archivedAt" IS NULL' : ''}`,
    );
    changes.added.push(index.name);
  }
  const keep = new Set(planned.map((index) => index.name));
  for (const name of existing.keys()) {
    if (keep.has(name) || !MANAGED_PREFIXES.some((prefix) => name.startsWith(`${prefix}${layout.table}_`))) continue;
    await client.query(`DROP INDEX IF EXISTS ${ident(name)}`);
    changes.dropped.push(name);
  }
  return changes;
}

/** Index name -> definition, for the table in the current schema. */
async function existingIndexes(client: Queryable, table: string): Promise<Map<string, string>> {
  const { rows } = await client.query(
    'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1',
    [table],
  );
  return new Map(rows.map((row: { indexname: string; indexdef: string }) => [row.indexname, row.indexdef]));
}

/**
 * The columns of the table in the current schema, from the catalog of that one table
 * (information_schema reads every schema's columns, slow where a database holds many).
 */
async function existingColumns(client: Queryable, table: string): Promise<Set<string>> {
  const { rows } = await client.query(
    `SELECT attname FROM pg_attribute
      WHERE attrelid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident($1))
        AND attnum > 0 AND NOT attisdropped`,
    [table],
  );
  return new Set(rows.map((row: { attname: string }) => row.attname));
}

/** A new folded-text column of a filterable string: the stored values get theirs at once. */
async function addFoldColumn(client: Queryable, name: string, field: string, fold: string): Promise<void> {
  const table = ident(name);
  await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${ident(fold)} TEXT COLLATE "C"`);
  const rows = await client.query(
    `SELECT "id", ${ident(field)} AS value FROM ${table} WHERE ${ident(field)} IS NOT NULL`,
  );
  for (const row of rows.rows as { id: string; value: unknown }[]) {
    if (typeof row.value === 'string')
      await client.query(`UPDATE ${table} SET ${ident(fold)} = $1 WHERE "id" = $2`, [foldText(row.value), row.id]);
  }
}

/**
 * Numbers rows of `table` as their transaction commits: a deferred trigger gives each row
 * inserted with `into` null the next value of the counter row, so the counter row is locked from
 * the commit's start to its end only (its order is commit order, as with an increment in the
 * transaction). A row that already has its number (written by an instance that increments the
 * counter itself) is left alone. Runs under the schema lock; any instance may run it again.
 */
export async function installCommitNumbering(
  client: Queryable,
  schema: string,
  table: string,
  into: string,
  counter: { table: string; id: string; field: string },
): Promise<void> {
  const qualified = (name: string) => `${ident(schema)}.${ident(name)}`;
  const fn = qualified(`number_${table}_${into}`);
  const trigger = `number_${table}_${into}`;
  const value = ident(counter.field);
  await client.query(`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $body$
DECLARE next BIGINT;
BEGIN
  UPDATE ${qualified(counter.table)} SET ${value} = ${value} + 1 WHERE "id" = ${literal(counter.id)} RETURNING ${value} INTO next;
  IF next IS NULL THEN RAISE EXCEPTION 'the counter row of %.% is missing', TG_TABLE_NAME, ${literal(into)}; END IF;
  UPDATE ${qualified(table)} SET ${ident(into)} = next WHERE "id" = NEW."id";
  RETURN NULL;
END
$body$`);
  const { rows } = await client.query(
    'SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = $2 AND NOT tgisinternal',
    [qualified(table), trigger],
  );
  if (rows.length > 0) return;
  await client.query(
    `CREATE CONSTRAINT TRIGGER ${ident(trigger)} AFTER INSERT ON ${qualified(table)} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.${ident(into)} IS NULL) EXECUTE FUNCTION ${fn}()`,
  );
}

/** A string as an SQL literal. */
export const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
