import pg from 'pg';
import { physicalModel } from '../../model/locales.js';
import type { AppModel } from '../../model/types.js';
import { activeContext } from '../../telemetry/tracing.js';
import { searchText, searchVocabulary } from '../common/searchText.js';
import { type TableLayout, tableLayout } from '../common/tableLayout.js';
import { ident } from '../sql/ident.js';
import { decodeRow, encodeFields } from '../sql/rowCodec.js';
import { type Row, SqlStore, type Values } from '../sql/sqlStore.js';
import { deleteStatement, insertStatement, type Statement, updateStatement } from '../sql/statements.js';
import type { Doc, InsertInput, NumberingCounter, SchemaChanges, Store, UpdateSet, Where } from '../types.js';
import { StoreUnavailable, UniqueConflict, ValueOutOfRange } from '../types.js';
import { changeTriggers, installChangeFunction, installChangeTrigger, serverApplicationName } from './changeNotices.js';
import { pgDialect as dialect } from './pgDialect.js';
import { CommitGroup, DeferringConnection, type Numbering } from './pgTransaction.js';
import { COLLATIONS, installCommitNumbering, type Queryable, SEARCH_COLUMN, syncPgSchema } from './syncPgSchema.js';

const INT8_OID = 20;
const UNIQUE_VIOLATION = '23505';
const types = {
  getTypeParser: (oid: number, format?: string) =>
    oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
};
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
]);

/** serialization_failure and deadlock_detected: the transaction may simply be run again. */
const RETRYABLE_CODES = new Set(['40001', '40P01']);
const SERIALIZATION_RETRIES = 5;
const isSerializationFailure = (error: unknown) => RETRYABLE_CODES.has((error as { code?: string })?.code ?? '');

export type { Queryable };

/** Statement texts PgStore names, so each connection parses and plans them once; beyond, they run unnamed. */
const MAX_PREPARED = 500;
/** "cached plan must not change result type": a prepared SELECT * met a table another instance changed. */
const CACHED_PLAN_CHANGED = '0A000';

/** Names for statement texts, so that pg prepares each once per connection. */
class PreparedNames {
  private readonly names = new Map<string, string>();
  private generation = 0;

  config({ sql, params }: Statement, rowMode?: 'array'): pg.QueryConfig {
    let name = this.names.get(sql);
    if (name === undefined && this.names.size < MAX_PREPARED) {
      name = `entigen_${this.generation}_${this.names.size}`;
      this.names.set(sql, name);
    }
    return { ...(name === undefined ? {} : { name }), text: sql, values: params, ...(rowMode ? { rowMode } : {}) };
  }

  /** After a schema change: what was prepared may return other columns now; new names from here on. */
  reset(): void {
    this.generation++;
    this.names.clear();
  }
}

/** Runs a statement prepared; once more unprepared (and with new names) when the table changed under it. */
async function runPrepared(
  client: Queryable,
  prepared: PreparedNames,
  statement: Statement,
  rowMode?: 'array',
): Promise<pg.QueryResult> {
  try {
    return await client.query(prepared.config(statement, rowMode));
  } catch (error) {
    if ((error as { code?: string }).code !== CACHED_PLAN_CHANGED) throw error;
    prepared.reset();
    return client.query({ text: statement.sql, values: statement.params, ...(rowMode ? { rowMode } : {}) });
  }
}

/**
 * A pooled client whose queries run one after another. pg deprecates overlapping queries on one
 * client, and code inside a transaction (history writes beside the record's own) may overlap them.
 */
function queued(client: pg.PoolClient): Queryable {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    query(sql, params) {
      const result = tail.then(() => (typeof sql === 'string' ? client.query(sql, params) : client.query(sql)));
      tail = result.catch(() => undefined);
      return result;
    },
  };
}

/** Pooled clients that already carry an error listener of ours (a client is checked out many times). */
/**
 * Holds, until the transaction ends, the lock that makes one instance at a time change `schema`
 * (the connection's current schema when none is named): apps in other schemas of the same
 * database never wait for it.
 */
async function lockSchema(client: Queryable, schema: string | undefined): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(7349001, hashtext(coalesce($1, current_schema())))', [
    schema ?? null,
  ]);
}

const listening = new WeakSet<pg.PoolClient>();

/** PostgreSQL through pg: a pool with limits, real transactions on one pooled client. */
export class PgStore extends SqlStore {
  readonly kind = 'postgres';
  protected readonly dialect = dialect;
  protected readonly booleansAsIntegers = false;

  /**
   * `announced`: a server's pool, whose writes the server announces on the bus itself; the change
   * triggers notify for every other connection's (changeNotices.ts).
   */
  static open(url: string, options: { schema?: string; max?: number; announced?: boolean } = {}): PgStore {
    // The schema is a connection option, so it is in force before the first query on every connection.
    const searchPath = options.schema ? { options: `-c search_path=${options.schema}` } : {};
    // A startup parameter every pooler passes on (PgBouncer included), never left on a shared
    // connection; the URL's own name (which pg would put first) follows the server's.
    const target = new URL(url);
    const given = target.searchParams.get('application_name') ?? undefined;
    if (options.announced) target.searchParams.delete('application_name');
    const pool = new pg.Pool({
      connectionString: target.toString(),
      ...(options.announced ? { application_name: serverApplicationName(given) } : {}),
      max: options.max ?? 10,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      types,
      ...searchPath,
    });
    pool.on('error', () => undefined);
    return new PgStore(
      {
        pool,
        layouts: new Map(),
        schema: options.schema,
        prepared: new PreparedNames(),
        numbered: new Map(),
        commits: new CommitGroup(),
      },
      undefined,
    );
  }

  private constructor(
    private readonly shared: {
      pool: pg.Pool;
      layouts: Map<string, TableLayout>;
      schema?: string;
      /** The schema the tables were found in at init (without `schema`, the search path's first). */
      current?: string;
      prepared: PreparedNames;
      /** Collections numbered as they commit (numberOnCommit), with their counter. */
      numbered: Map<string, NumberingCounter>;
      commits: CommitGroup;
    },
    private readonly client: Queryable | undefined,
  ) {
    super();
  }

  protected get layouts(): Map<string, TableLayout> {
    return this.shared.layouts;
  }

  protected async rows(statement: Statement): Promise<Row[]> {
    return (await this.run(statement)).rows;
  }

  protected async valueRows(statement: Statement): Promise<Values[]> {
    return (await this.run(statement, 'array')).rows as unknown as Values[];
  }

  protected async row(statement: Statement): Promise<Row | undefined> {
    return (await this.run(statement)).rows[0];
  }

  /** A connection of its own (not from the pool), for LISTEN: it stays open as long as the caller keeps it. */
  listener(): pg.Client {
    const { options } = this.shared.pool;
    return new pg.Client({ connectionString: options.connectionString, connectionTimeoutMillis: 5000, types });
  }

  /** NOTIFY on `channel` (pg_notify: the name is a value, not an identifier; delivered after commit). */
  async notify(channel: string, payload: string): Promise<void> {
    await this.shared.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  /** A setting of the server (`SHOW name`), or undefined when it cannot be read. */
  async setting(name: string): Promise<string | undefined> {
    try {
      const result = await this.shared.pool.query('SELECT current_setting($1, true) AS value', [name]);
      return (result.rows[0]?.value as string | null) ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** The schema the tables live in: notices are database-wide, so a bus names it. */
  get schemaName(): string {
    return this.shared.schema ?? this.shared.current ?? 'public';
  }

  async init(declared: AppModel): Promise<SchemaChanges> {
    // Localized fields are laid out a column per locale, whoever opened the store.
    const model = physicalModel(declared);
    const changes: SchemaChanges = { added: [], dropped: [] };
    await this.withTransaction(async (client) => {
      // One instance at a time prepares a schema; other schemas of the database go on meanwhile.
      await lockSchema(client, this.shared.schema);
      if (this.shared.schema) {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(this.shared.schema)}`);
        await client.query(`SET LOCAL search_path TO ${ident(this.shared.schema)}`);
      }
      for (const { name, locale } of COLLATIONS) {
        await client.query(
          `CREATE COLLATION IF NOT EXISTS ${ident(name)} (provider = icu, locale = '${locale}', deterministic = false)`,
        );
      }
      const schema = ((await client.query('SELECT current_schema() AS name')).rows[0] as { name: string }).name;
      this.shared.current = schema;
      await installChangeFunction(client, schema);
      const triggers = await changeTriggers(client, schema);
      for (const entity of model.entities) {
        const layout = tableLayout(entity);
        const { added, dropped } = await syncPgSchema(client, layout);
        changes.added.push(...added);
        changes.dropped.push(...dropped);
        await installChangeTrigger(client, schema, layout.table, entity.plural, triggers);
        this.shared.layouts.set(entity.plural, layout);
        layout.siblings = this.shared.layouts;
      }
    });
    // Tables may have changed: statements prepared before could return other columns.
    this.shared.prepared.reset();
    return changes;
  }

  async insert(collection: string, doc: Doc): Promise<Doc> {
    const [inserted] = await this.insertMany(collection, [doc]);
    return inserted;
  }

  async insertMany(collection: string, docs: Doc[]): Promise<Doc[]> {
    return this.insertRows(collection, docs);
  }

  /** Inserts `docs`; `numbered`: their field `into` is left null, for their counter row to number. */
  private async insertRows(
    collection: string,
    docs: Doc[],
    numbered?: { into: string; by: Numbering },
  ): Promise<Doc[]> {
    const layout = this.layout(collection);
    await this.withTransaction(async (client) => {
      for (const doc of docs) {
        const values = encodeFields(layout, doc, false);
        if (layout.searchFields.length > 0) values.set(SEARCH_COLUMN, this.searchValue(layout, doc));
        if (numbered) {
          // Last, so that a transaction sent whole can write the number in its place (joinHeld).
          values.delete(numbered.into);
          values.set(numbered.into, null);
        }
        const statement = insertStatement(layout, values, dialect);
        // An insert answers nothing the caller waits for: it goes out with the next statement or COMMIT.
        if (client instanceof DeferringConnection && client.defer(statement, numbered?.by)) continue;
        await this.guard(layout, client, statement);
      }
    });
    return docs.map(
      (doc) => Object.fromEntries([...layout.columns.keys()].map((field) => [field, doc[field] ?? null])) as Doc,
    );
  }

  async update(collection: string, id: string, set: UpdateSet, where?: Where): Promise<Doc | null> {
    const layout = this.layout(collection);
    const statement = updateStatement(layout, id, encodeFields(layout, set, false), where, dialect);
    if (!statement) return this.get(collection, id, where);
    return this.withTransaction(async (client) => {
      const { rows } = await this.guard(layout, client, statement);
      if (!rows[0]) return null;
      const doc = decodeRow(layout, rows[0]);
      if (layout.searchFields.some((f) => f in set)) {
        await client.query(`UPDATE ${ident(layout.table)} SET "${SEARCH_COLUMN}" = $1 WHERE "id" = $2`, [
          this.searchValue(layout, doc),
          id,
        ]);
      }
      return doc;
    });
  }

  async remove(collection: string, id: string, where?: Where): Promise<boolean> {
    const { rowCount } = await this.run(deleteStatement(this.layout(collection), id, where, dialect));
    return (rowCount ?? 0) > 0;
  }

  async numberOnCommit(collection: string, counter: NumberingCounter): Promise<void> {
    const table = this.layout(collection).table;
    const counterTable = this.layout(counter.collection).table;
    await this.withTransaction(async (client) => {
      await lockSchema(client, this.schemaName);
      await installCommitNumbering(client, this.schemaName, table, counter.into, { ...counter, table: counterTable });
    });
    this.shared.numbered.set(collection, counter);
  }

  async insertNumbered(collection: string, docs: InsertInput[], counter: NumberingCounter): Promise<boolean> {
    const numbered = this.shared.numbered.get(collection);
    if (
      numbered?.collection !== counter.collection ||
      numbered.id !== counter.id ||
      numbered.field !== counter.field ||
      numbered.into !== counter.into
    )
      return false;
    const by = { table: ident(this.layout(counter.collection).table), id: counter.id, field: counter.field };
    await this.insertRows(collection, docs, { into: counter.into, by });
    return true;
  }

  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.client) return fn(this);
    return this.withTransaction((client) => fn(new PgStore(this.shared, client)));
  }

  /** One REPEATABLE READ, READ ONLY transaction: every read of `fn` sees the same committed state. */
  async snapshot<T>(fn: (view: Store) => Promise<T>): Promise<T> {
    const client = await this.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await fn(new PgStore(this.shared, queued(client)));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw translate(error);
    } finally {
      client.release();
    }
  }

  async ping(): Promise<void> {
    await this.run({ sql: 'SELECT 1', params: [] });
  }

  async close(): Promise<void> {
    await this.shared.pool.end().catch(() => undefined);
  }

  /**
   * One transaction on one pooled client. A serialization failure or deadlock (another
   * transaction won) rolls back and runs `fn` again, up to SERIALIZATION_RETRIES times.
   */
  private async withTransaction<T>(fn: (client: Queryable) => Promise<T>): Promise<T> {
    if (this.client) return fn(this.client);
    // The transaction's span, active as it starts: its commit may go out with others' later.
    const trace = activeContext();
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      const tx = new DeferringConnection(client, this.shared.commits, trace);
      try {
        const result = await fn(tx);
        await tx.commit();
        return result;
      } catch (error) {
        await tx.rollback().catch(() => undefined);
        if (isSerializationFailure(error) && attempt < SERIALIZATION_RETRIES) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
          continue;
        }
        throw translate(error);
      } finally {
        client.release();
      }
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.shared.pool.connect();
    } catch (error) {
      throw translate(error);
    }
    // The pool listens for errors of idle clients only: a checked-out client whose connection
    // drops (the database restarts) would emit an unheard 'error' and end the process. Its query
    // rejects with the same error, which is what the caller handles.
    if (!listening.has(client)) {
      listening.add(client);
      client.on('error', () => undefined);
    }
    return client;
  }

  private async run(statement: Statement, rowMode?: 'array'): Promise<pg.QueryResult> {
    try {
      return await runPrepared(this.client ?? this.shared.pool, this.shared.prepared, statement, rowMode);
    } catch (error) {
      throw translate(error);
    }
  }

  private async guard(layout: TableLayout, client: Queryable, statement: Statement): Promise<pg.QueryResult> {
    try {
      return await runPrepared(client, this.shared.prepared, statement);
    } catch (error) {
      const { code, constraint } = error as { code?: string; constraint?: string };
      if (code === UNIQUE_VIOLATION) throw conflictOf(layout.table, constraint);
      throw error;
    }
  }

  private searchValue(layout: TableLayout, doc: Record<string, unknown>): string {
    return searchVocabulary(layout.searchFields.map((f) => searchText(doc[f])).join(' '));
  }
}

const NUMERIC_OUT_OF_RANGE = '22003';

/** A unique index's refusal, naming its field (`ux_<table>_<field>`; the primary key's is the id). */
function conflictOf(table: string, constraint: string | undefined): UniqueConflict {
  const prefix = `ux_${table}_`;
  return new UniqueConflict(table, constraint?.startsWith(prefix) ? constraint.slice(prefix.length) : 'id');
}

function translate(error: unknown): unknown {
  const code = (error as { code?: string })?.code;
  // A held-back insert refused at COMMIT (a refused statement's own is turned by `guard`).
  if (code === UNIQUE_VIOLATION) {
    const { table, constraint } = error as { table?: string; constraint?: string };
    if (table) return conflictOf(table, constraint);
  }
  if (code && CONNECTION_CODES.has(code))
    return new StoreUnavailable(`PostgreSQL is unavailable: ${(error as Error).message}`);
  if (code === NUMERIC_OUT_OF_RANGE) return new ValueOutOfRange((error as Error).message);
  if (
    error instanceof Error &&
    /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end/i.test(
      error.message,
    )
  )
    return new StoreUnavailable(`PostgreSQL is unavailable: ${error.message}`);
  return error;
}
