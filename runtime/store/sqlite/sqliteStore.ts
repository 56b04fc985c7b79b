import Database from 'better-sqlite3';
import { physicalModel } from '../../model/locales.js';
import type { AppModel } from '../../model/types.js';
import { nullFilled, type Picker } from '../common/compiledLiteral.js';
import { dateBucket } from '../common/dateBucket.js';
import { searchText } from '../common/searchText.js';
import { collationKey } from '../common/sortKey.js';
import { type TableLayout, tableLayout } from '../common/tableLayout.js';
import type { SqlDialect } from '../sql/dialect.js';
import { ident } from '../sql/ident.js';
import { decodeRow, decodeValues, encodeFields, rowShape } from '../sql/rowCodec.js';
import { type Row, SqlStore, type Values } from '../sql/sqlStore.js';
import { deleteStatement, insertStatement, type Statement, updateStatement } from '../sql/statements.js';
import type {
  DateBucket,
  Doc,
  FindQuery,
  IncrementInput,
  InsertInput,
  NumberingCounter,
  SchemaChanges,
  Store,
  UpdateSet,
  Where,
} from '../types.js';
import { StoreUnavailable, UniqueConflict } from '../types.js';
import { GroupCommit } from './groupCommit.js';
import { GroupNumbering } from './groupNumbering.js';
import { KnownIdSets } from './knownIdSets.js';
import { MIN_MATCHING, sortIndexScan } from './sortIndexScan.js';
import { sqliteDialect } from './sqliteDialect.js';
import { ftsContentTable, ftsTable, syncSqliteSchema } from './syncSqliteSchema.js';
import { TextQueue } from './textQueue.js';
import { WalCheckpointer } from './walCheckpointer.js';

const STATEMENT_CACHE_SIZE = 500;
/** Keys the statements that answer arrays of values apart from those that answer objects. */
const VALUES_MODE = '\0values:';

/** State shared by a store and the transaction views made from it. */
interface Shared {
  db: Database.Database;
  layouts: Map<string, TableLayout>;
  statements: Map<string, Database.Statement>;
  /** Settles when the open transaction ends; other callers wait on it. */
  transactionDone?: Promise<void>;
  /** PRAGMA data_version when last asked: it moves when another connection commits. */
  dataVersion?: number;
  dataVersionStatement?: Database.Statement;
  /** The process's write count when PRAGMA data_version was read in this turn of the event loop (changedElsewhere). */
  versionReadAt?: number;
  group: GroupCommit;
  /** Text index writes of the running group's members, written after the last of them. */
  text: TextQueue;
  /** Numbers the running group's members took for their numbered rows (the event log's seq). */
  numbering: GroupNumbering;
  /** The SQLite dialect, with the id sets this connection keeps. */
  dialect: SqlDialect;
  /** Copies the WAL into the database file on a thread of its own (file databases only). */
  checkpointer?: WalCheckpointer;
}

/** Per table: the text of its INSERTs by the columns they set (a create sets the same ones each time). */
const insertTexts = new WeakMap<TableLayout, Map<string, string>>();
/** Column sets remembered per table; writes with others build their text each time. */
const MAX_INSERT_SHAPES = 64;

/**
 * The INSERT of `values`' columns, built once per column set: the same string each time, so the
 * statement cache finds it by a hash V8 keeps on the string instead of hashing a fresh one.
 */
function insertSqlOf(layout: TableLayout, values: Map<string, unknown>): string {
  let texts = insertTexts.get(layout);
  if (!texts) {
    texts = new Map();
    insertTexts.set(layout, texts);
  }
  const columns = [...values.keys()].join(',');
  let sql = texts.get(columns);
  if (sql === undefined) {
    sql = insertStatement(layout, values, sqliteDialect).sql;
    if (texts.size < MAX_INSERT_SHAPES) texts.set(columns, sql);
  }
  return sql;
}

/** Writes through any store of this process: another store on the same file sees them at once (changedElsewhere). */
let processWrites = 0;

/** Per table: its documents as reads return them (normalized). */
const normalizers = new WeakMap<TableLayout, Picker>();

/** The embedded store: better-sqlite3, WAL, synchronous=FULL, FTS5 for text search. */
export class SqliteStore extends SqlStore {
  readonly kind = 'sqlite';

  static open(path: string): SqliteStore {
    let db: Database.Database;
    try {
      db = new Database(path);
    } catch (error) {
      throw new StoreUnavailable(`cannot open SQLite database ${path}: ${(error as Error).message}`);
    }
    const journal = db.pragma('journal_mode = WAL', { simple: true });
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.function('entigen_collate', { deterministic: true }, (value: unknown, strength: unknown, numeric: unknown) =>
      typeof value === 'string'
        ? collationKey(value, { locale: '', strength: Number(strength) as 1 | 2 | 3, numericOrdering: numeric === 1 })
        : null,
    );
    db.function('entigen_bucket', { deterministic: true }, (value: unknown, bucket: unknown, timeZone: unknown) =>
      dateBucket(value, bucket as DateBucket, String(timeZone)),
    );
    const text = new TextQueue();
    const known = new KnownIdSets(db);
    const checkpointer = journal === 'wal' && !db.memory ? new WalCheckpointer(db, db.name) : undefined;
    const numbering = new GroupNumbering({
      read: (counter) => store.readCounter(counter),
      write: (counter, value) => store.writeCounter(counter, value),
    });
    const shared: Shared = {
      db,
      dialect: { ...sqliteDialect, knownIds: (ids) => known.subquery(ids) },
      layouts: new Map(),
      statements: new Map(),
      text,
      group: new GroupCommit(
        db,
        (done) => {
          shared.transactionDone = done;
        },
        [text, numbering],
        checkpointer,
      ),
      numbering,
      checkpointer,
    };
    // Named: the numbering reads and writes counters through it.
    const store = new SqliteStore(shared, false);
    return store;
  }

  private constructor(
    private readonly shared: Shared,
    private readonly inTransaction: boolean,
  ) {
    super();
  }

  protected readonly booleansAsIntegers = true;

  /**
   * The online backup API, 256 pages a step with the event loop free between steps. A write on
   * another connection (a server while `entigen backup` runs) restarts the copy: after a restart
   * the rest goes in one step, a read transaction that WAL lets writers work beside.
   */
  async backupFile(path: string, progress?: (done: number, total: number) => void): Promise<void> {
    let remaining = Number.POSITIVE_INFINITY;
    let restarted = false;
    await this.shared.db.backup(path, {
      progress({ totalPages, remainingPages }) {
        if (remainingPages > remaining) restarted = true;
        remaining = remainingPages;
        progress?.(totalPages - remainingPages, totalPages);
        return restarted ? Math.max(remainingPages, 1) : 256;
      },
    });
  }

  protected get layouts(): Map<string, TableLayout> {
    return this.shared.layouts;
  }

  protected get dialect(): SqlDialect {
    return this.shared.dialect;
  }

  protected rows({ sql, params }: Statement): Row[] | Promise<Row[]> {
    const all = () => this.ran(this.statement(sql), params, 'all') as Row[];
    const waiting = this.turn();
    return waiting ? waiting.then(all) : all();
  }

  /** A page sorted by an indexed field may be read by walking that index (sortIndexScan.ts). */
  override async find(collection: string, query: FindQuery): Promise<Doc[]> {
    if (query.matching !== undefined) {
      const page = await this.walkSortIndex(collection, query, query.matching);
      if (page) return page;
    }
    return super.find(collection, query);
  }

  private async walkSortIndex(collection: string, query: FindQuery, matching: number): Promise<Doc[] | undefined> {
    const layout = this.layout(collection);
    if (matching < MIN_MATCHING) return undefined;
    // Rowids only grow, so the largest is at least the table's size (deleted rows only raise the estimate).
    const size = Number(
      (await this.valueRows({ sql: `SELECT max(rowid) FROM ${ident(layout.table)}`, params: [] }))[0][0] ?? 0,
    );
    const scan = sortIndexScan(layout, query, this.shared.dialect, matching, size);
    if (!scan) return undefined;
    if (scan.nulls && (await this.valueRows(scan.nulls)).length > 0) return undefined;
    const [bound] = await this.valueRows(scan.bound);
    const rows = await this.valueRows(scan.page(bound));
    // Without a bound the walk read the whole index: what it found is all there is.
    if (bound && rows.length < scan.limit) return undefined;
    const shape = rowShape(layout);
    return rows.map((values) => decodeValues(shape, values));
  }

  protected valueRows({ sql, params }: Statement): Values[] | Promise<Values[]> {
    const all = () => this.ran(this.statement(sql, true), params, 'all') as Values[];
    const waiting = this.turn();
    return waiting ? waiting.then(all) : all();
  }

  protected row(statement: Statement): Row | undefined | Promise<Row | undefined> {
    const waiting = this.turn();
    return waiting ? waiting.then(() => this.one(statement)) : this.one(statement);
  }

  async init(declared: AppModel): Promise<SchemaChanges> {
    // Localized fields are laid out a column per locale, whoever opened the store.
    const model = physicalModel(declared);
    const changes: SchemaChanges = { added: [], dropped: [] };
    for (const entity of model.entities) {
      const layout = tableLayout(entity);
      // Immediate: the write lock is taken (waiting its turn) before the schema is read, so another
      // connection's commit between the read and a change cannot fail the sync as busy.
      const { added, dropped } = this.shared.db.transaction(() => syncSqliteSchema(this.shared.db, layout)).immediate();
      changes.added.push(...added);
      changes.dropped.push(...dropped);
      this.shared.layouts.set(entity.plural, layout);
      layout.siblings = this.shared.layouts;
    }
    return changes;
  }

  /** Group commits so far and the transactions they carried (operator metrics). */
  commitStatistics(): { groups: number; members: number } {
    return { groups: this.shared.group.groups, members: this.shared.group.members };
  }

  /**
   * Whether another connection (a script, a second process) committed since the last call. The
   * pragma takes the WAL's shared-memory locks, about 5 µs, and a request asks several times
   * (its caller, its counts, its page): it is read once per turn of the event loop, and again
   * after any write through this process. Another process's commit during the turn is seen at
   * the next, as if it had come a moment later.
   */
  changedElsewhere(): boolean {
    const { shared } = this;
    // A closed database answers its own error (503) to the query that follows.
    if (!shared.db.open || shared.versionReadAt === processWrites) return false;
    if (shared.versionReadAt === undefined)
      setImmediate(() => {
        shared.versionReadAt = undefined;
      });
    shared.versionReadAt = processWrites;
    // Prepared once: db.pragma() would prepare it again on every call.
    shared.dataVersionStatement ??= shared.db.prepare('PRAGMA data_version').pluck();
    const version = shared.dataVersionStatement.get() as number;
    const changed = shared.dataVersion !== undefined && version !== shared.dataVersion;
    shared.dataVersion = version;
    return changed;
  }

  async insert(collection: string, doc: Doc): Promise<Doc> {
    await this.turn();
    const layout = this.layout(collection);
    this.guard(layout, () => this.atomic(() => this.insertRow(layout, doc)));
    return this.normalized(layout, doc);
  }

  async insertMany(collection: string, docs: Doc[]): Promise<Doc[]> {
    await this.turn();
    const layout = this.layout(collection);
    this.guard(layout, () =>
      this.atomic(() => {
        for (const doc of docs) this.insertRow(layout, doc);
      }),
    );
    return docs.map((doc) => this.normalized(layout, doc));
  }

  /**
   * Inside a group, the rows take their numbers from the group's count (groupNumbering.ts), the
   * counter row being written once before the COMMIT; outside one, the caller increments it.
   */
  async insertNumbered(collection: string, docs: InsertInput[], counter: NumberingCounter): Promise<boolean> {
    if (!this.inTransaction) return false;
    const first = this.shared.numbering.take(counter, docs.length);
    await this.insertMany(
      collection,
      docs.map((doc, i) => Object.assign({}, doc, { [counter.into]: first + i })),
    );
    return true;
  }

  override async get(collection: string, id: string, where?: Where): Promise<Doc | null> {
    if (this.inTransaction) this.shared.numbering.untouched(collection, id);
    return super.get(collection, id, where);
  }

  override async increment(
    collection: string,
    id: string,
    by: IncrementInput,
    set?: UpdateSet,
    where?: Where,
  ): Promise<Doc | null> {
    if (this.inTransaction) this.shared.numbering.untouched(collection, id);
    return super.increment(collection, id, by, set, where);
  }

  async update(collection: string, id: string, set: UpdateSet, where?: Where): Promise<Doc | null> {
    if (this.inTransaction) this.shared.numbering.untouched(collection, id);
    await this.turn();
    const layout = this.layout(collection);
    const statement = updateStatement(layout, id, encodeFields(layout, set, true), where, this.shared.dialect);
    if (!statement) return this.get(collection, id, where);
    return this.guard(layout, () =>
      this.atomic(() => {
        const row = this.one(statement);
        if (!row) return null;
        const doc = decodeRow(layout, row);
        if (layout.searchFields.some((f) => f in set)) this.indexText(layout, doc, true);
        return doc;
      }),
    );
  }

  async remove(collection: string, id: string, where?: Where): Promise<boolean> {
    await this.turn();
    const layout = this.layout(collection);
    const { sql, params } = deleteStatement(layout, id, where, this.shared.dialect);
    return this.atomic(() => {
      const { changes } = this.ran(this.statement(sql), params, 'run') as Database.RunResult;
      if (changes > 0 && layout.searchFields.length > 0) this.writeText(() => this.removeText(layout, id));
      return changes > 0;
    });
  }

  /** Concurrent transactions share one commit (groupCommit.ts), each undone alone should it fail. */
  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    // No turn(): a transaction that arrives while a group runs joins it.
    return this.shared.group.run(() => fn(new SqliteStore(this.shared, true)));
  }

  /** Warnings of the store's own machinery (its checkpoint thread) go to `warn` instead of the process. */
  reportWarningsTo(warn: (message: string) => void): void {
    if (this.shared.checkpointer) this.shared.checkpointer.warn = warn;
  }

  async ping(): Promise<void> {
    this.statement('SELECT 1').get();
  }

  async close(): Promise<void> {
    await this.turn();
    // Before the writer's connection: the last connection to close checkpoints and removes the WAL.
    await this.shared.checkpointer?.close();
    if (this.shared.db.open) this.shared.db.close();
  }

  /** Waits while another caller's transaction is open: its statements share this connection. */
  /**
   * Statements that stand or fall together (a row and its text index). Inside a transaction the
   * member's savepoint (groupCommit.ts) already undoes them on failure, and where a statement
   * fails it is the first, before anything changed: a nested savepoint would only copy every
   * page it touches to the statement journal once more.
   */
  private atomic<T>(statements: () => T): T {
    processWrites++;
    if (this.inTransaction) return statements();
    const { checkpointer } = this.shared;
    checkpointer?.beforeTransaction();
    const result = this.shared.db.transaction(statements)();
    checkpointer?.committed();
    return result;
  }

  private turn(): Promise<void> | undefined {
    if (this.inTransaction || !this.shared.transactionDone) return undefined;
    return (async () => {
      while (this.shared.transactionDone) await this.shared.transactionDone;
    })();
  }

  /** The prepared statement of `sql`, answering rows as objects, or as arrays of values (`values`). */
  private statement(sql: string, values = false): Database.Statement {
    const { statements, db } = this.shared;
    if (!db.open) throw new StoreUnavailable('the SQLite database is closed');
    // A search inside a group first writes the text its members queued, so it finds it.
    if (this.inTransaction && this.shared.text.pending && sql.includes(' MATCH ')) this.shared.text.runQueued();
    const key = values ? `${VALUES_MODE}${sql}` : sql;
    let statement = statements.get(key);
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      statement = db.prepare(sql);
      if (values) statement.raw(true);
      statements.set(key, statement);
    }
    return statement;
  }

  /** The value of a counter row (GroupNumbering), read inside the group's transaction. */
  private readCounter(counter: NumberingCounter): number {
    const table = ident(this.layout(counter.collection).table);
    const row = this.statement(`SELECT ${ident(counter.field)} AS "value" FROM ${table} WHERE "id" = ?`).get(
      counter.id,
    ) as { value: unknown } | undefined;
    if (!row) throw new Error(`the counter row ${counter.collection} ${counter.id} is missing`);
    return Number(row.value ?? 0);
  }

  private writeCounter(counter: NumberingCounter, value: number): void {
    const table = ident(this.layout(counter.collection).table);
    this.ran(
      this.statement(`UPDATE ${table} SET ${ident(counter.field)} = ? WHERE "id" = ?`),
      [value, counter.id],
      'run',
    );
  }

  /**
   * Runs a statement; inside a transaction the group is told of it, and keeps those that wrote
   * for a replay should a later member of the group fail (groupCommit.ts).
   */
  private ran(statement: Database.Statement, params: unknown[], how: 'all' | 'get' | 'run'): unknown {
    const result =
      how === 'all' ? statement.all(...params) : how === 'get' ? statement.get(...params) : statement.run(...params);
    if (this.inTransaction) this.shared.group.wrote(statement, params);
    return result;
  }

  /** The first row a statement answers (a record by id, or the row an UPDATE ... RETURNING wrote). */
  private one({ sql, params }: Statement): Record<string, unknown> | undefined {
    return this.ran(this.statement(sql), params, 'get') as Record<string, unknown> | undefined;
  }

  private insertRow(layout: TableLayout, doc: Doc): void {
    const values = encodeFields(layout, doc, true);
    // SQLite binds each value as it is, in the columns' order.
    this.ran(this.statement(insertSqlOf(layout, values)), [...values.values()], 'run');
    this.indexText(layout, doc, false);
  }

  private indexText(layout: TableLayout, doc: Doc, replace: boolean): void {
    if (layout.searchFields.length === 0) return;
    const fts = ident(ftsTable(layout));
    const values = [doc.id, ...layout.searchFields.map((f) => searchText(doc[f]))];
    this.writeText(() => {
      if (replace) this.removeText(layout, doc.id);
      this.ran(
        this.statement(
          `INSERT INTO ${fts} (id, ${layout.searchFields.map(ident).join(', ')}) VALUES (?${', ?'.repeat(layout.searchFields.length)})`,
        ),
        values,
        'run',
      );
    });
  }

  /** Removes a record's text entry, found through the id index on the FTS5 content table. */
  private removeText(layout: TableLayout, id: string): void {
    this.ran(
      this.statement(
        `DELETE FROM ${ident(ftsTable(layout))} WHERE rowid IN (SELECT id FROM ${ident(ftsContentTable(layout))} WHERE c0 = ?)`,
      ),
      [id],
      'run',
    );
  }

  /** Inside a group the text index is written after its last member (textQueue.ts says why). */
  private writeText(write: () => void): void {
    if (this.inTransaction) this.shared.text.push(write);
    else write();
  }

  /** The document as a read would return it: every field present, null when unset. */
  private normalized(layout: TableLayout, doc: Doc): Doc {
    let pick = normalizers.get(layout);
    if (!pick) {
      pick = nullFilled([...layout.columns.keys()]);
      normalizers.set(layout, pick);
    }
    return pick(doc) as Doc;
  }

  private guard<T>(layout: TableLayout, write: () => T): T {
    try {
      return write();
    } catch (error) {
      const message = (error as Error).message;
      // A unique index over an expression (per tenant) names the index, one over a column the column.
      const index = /UNIQUE constraint failed: index '([^']+)'/.exec(message);
      if (index) {
        const prefix = `ux_${layout.table}_`;
        throw new UniqueConflict(layout.table, index[1].startsWith(prefix) ? index[1].slice(prefix.length) : 'id');
      }
      const match = /UNIQUE constraint failed: [^.]+\.(\w+)/.exec(message);
      if (match) throw new UniqueConflict(layout.table, match[1]);
      throw error;
    }
  }
}
