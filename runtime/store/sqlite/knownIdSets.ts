import type Database from 'better-sqlite3';

/** The in-memory database attached to the connection that holds the sets. */
const SCHEMA = 'entigen_known';
/** Fewer ids than this are cheaper to bind as one JSON array than to keep in a table. */
const MIN_IDS = 16;
/** Sets and ids kept at most; the least recently used set goes first. */
const MAX_SETS = 64;
const MAX_IDS = 200_000;

/**
 * Id lists a rule through a reference selects (remembered by the count cache until a collection
 * they were read from is written), each kept in a table of an in-memory database attached to the
 * connection. A query then tests membership against that table's primary key, where a JSON array
 * bound to every query would be parsed and sorted into a temporary index each time.
 *
 * A set is known by the identity of its array: the cache hands out the same array for as long as
 * the ids stand, and a new one when they change. A table is made the second time an array is
 * seen (a list read once costs no table) and never inside a transaction, whose rollback would
 * take the table with it. An attached database, not TEMP: changing PRAGMA temp_store (the group
 * commit does) drops every temporary table.
 */
export class KnownIdSets {
  private readonly tables = new Map<readonly string[], string>();
  private readonly seen = new WeakSet<readonly string[]>();
  private ids = 0;
  private made = 0;

  constructor(private readonly db: Database.Database) {
    db.exec(`ATTACH DATABASE ':memory:' AS ${SCHEMA}`);
  }

  /** A one-column subquery of the ids, or undefined to bind them as a JSON array instead. */
  subquery(ids: readonly string[]): string | undefined {
    const table = this.tables.get(ids);
    if (table) {
      // Most recently used last.
      this.tables.delete(ids);
      this.tables.set(ids, table);
      return `SELECT "id" FROM ${table}`;
    }
    if (ids.length < MIN_IDS || ids.length > MAX_IDS || this.db.inTransaction || !this.db.open) return undefined;
    if (!this.seen.has(ids)) {
      this.seen.add(ids);
      return undefined;
    }
    const name = `${SCHEMA}."ids_${++this.made}"`;
    this.db.transaction(() => {
      this.db.exec(`CREATE TABLE ${name} ("id" TEXT PRIMARY KEY) WITHOUT ROWID`);
      const insert = this.db.prepare(`INSERT OR IGNORE INTO ${name} ("id") VALUES (?)`);
      for (const id of ids) insert.run(id);
    })();
    this.tables.set(ids, name);
    this.ids += ids.length;
    while (this.tables.size > MAX_SETS || this.ids > MAX_IDS) this.drop(this.tables.keys().next().value!);
    return `SELECT "id" FROM ${name}`;
  }

  /** Tables kept now (operator metrics and tests). */
  get size(): number {
    return this.tables.size;
  }

  private drop(ids: readonly string[]): void {
    const name = this.tables.get(ids)!;
    this.tables.delete(ids);
    this.ids -= ids.length;
    this.db.exec(`DROP TABLE IF EXISTS ${name}`);
  }
}
