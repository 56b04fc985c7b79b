import { createHash } from 'node:crypto';
import { ident } from '../sql/ident.js';
import { literal, type Queryable } from './syncPgSchema.js';

/**
 * How an entigen server's connections name themselves (`application_name`, which every pooler
 * passes on): their writes are announced on the bus by the server itself, so the change trigger
 * stays silent for them. Every other connection (psql, an ETL job, a second application,
 * entigen's own CLI) is named otherwise, and its commits notify.
 */
export const SERVER_APPLICATION = 'entigen server';

/** A server's `application_name`: SERVER_APPLICATION, followed by the one DATABASE_URL gives. */
export const serverApplicationName = (given: string | undefined) =>
  given ? `${SERVER_APPLICATION}: ${given}`.slice(0, 63) : SERVER_APPLICATION;

/** The trigger each entity's table carries, and its function (one per schema). */
const TRIGGER = 'entigen_changed';

/**
 * The channel a schema's change notices go to: notifications reach every session of the
 * database, so it names the schema. Channel names are identifiers, at most 63 bytes.
 */
export function changesChannel(schema: string): string {
  const name = `entigen_changes:${schema}`;
  return Buffer.byteLength(name) <= 63
    ? name
    : `entigen_changes:${createHash('sha256').update(schema).digest('hex').slice(0, 40)}`;
}

/** A notice's text: no sender (the bus's first line), then the topic and the written collection. */
export const CHANGED_TOPIC = 'changed';

/**
 * The function the change triggers call, in `schema`: a NOTIFY on the schema's channel naming the
 * collection, sent at commit (and not at all on a rollback; the notices of one transaction that
 * name the same collection are one), unless the connection is a server's (SERVER_APPLICATION).
 */
export async function installChangeFunction(client: Queryable, schema: string): Promise<void> {
  await client.query(`CREATE OR REPLACE FUNCTION ${ident(schema)}.${TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
  IF coalesce(current_setting('application_name', true), '') NOT LIKE '${SERVER_APPLICATION}%' THEN
    PERFORM pg_notify(TG_ARGV[0], E'\\n${CHANGED_TOPIC} ' || TG_ARGV[1]);
  END IF;
  RETURN NULL;
END
$body$`);
}

/**
 * A statement-level trigger on `table` after every INSERT, UPDATE, DELETE and TRUNCATE, whoever
 * runs it: the instances hear a write made outside them within the staleness bound. Kept by the
 * schema sync (made again when its channel or collection differ).
 */
export async function installChangeTrigger(
  client: Queryable,
  schema: string,
  table: string,
  collection: string,
  existing: ReadonlyMap<string, string>,
): Promise<boolean> {
  const qualified = `${ident(schema)}.${ident(table)}`;
  const args = `(${literal(changesChannel(schema))}, ${literal(collection)})`;
  const definition = existing.get(table);
  if (definition?.includes(`TRUNCATE`) && definition.endsWith(`${TRIGGER}${args}`)) return false;
  if (definition !== undefined) await client.query(`DROP TRIGGER ${TRIGGER} ON ${qualified}`);
  await client.query(
    `CREATE TRIGGER ${TRIGGER} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${qualified} FOR EACH STATEMENT EXECUTE FUNCTION ${ident(schema)}.${TRIGGER}${args}`,
  );
  return true;
}

/** The change triggers of `schema`'s tables, by table: their definitions, read in one query. */
export async function changeTriggers(client: Queryable, schema: string): Promise<Map<string, string>> {
  const { rows } = await client.query(
    `SELECT c.relname, pg_get_triggerdef(t.oid) AS definition FROM pg_trigger t
     JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND t.tgname = $2`,
    [schema, TRIGGER],
  );
  return new Map((rows as { relname: string; definition: string }[]).map((row) => [row.relname, row.definition]));
}
