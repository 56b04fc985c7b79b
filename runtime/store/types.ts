// The store contract: one interface, a small query IR, one named type per method's input and output.
// Repositories and entity operations speak only this; adapters never see HTTP.
import type { AppModel } from '../model/types.js';

export type Doc = Record<string, unknown> & { id: string };

export type ComparisonOp =
  | 'eq'
  | 'ne'
  | 'in'
  | 'nin'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'exists'
  | 'contains'
  | 'textContains'
  | 'textStartsWith';

/**
 * A condition on one top-level field. `contains`: an array field holds the value (or any of
 * `value` when it is an array). `nin`: the value is none of `value` (records without a value
 * included, as with `ne`). `textContains` / `textStartsWith`: a text field contains / starts with
 * the string, ignoring case and accents (the default collation's folding).
 */
export interface Condition {
  field: string;
  op: ComparisonOp;
  value?: unknown;
}
/**
 * A record reached through a reference: `field` (an objectId, or an array of them) names a
 * record of `collection` that matches `where` (any record of it when `where` is absent); for
 * an array, at least one. SQL stores compile it into a subquery, MongoDB fetches the ids first.
 */
export interface Through {
  field: string;
  collection: string;
  where?: Where;
  /**
   * Set by the access layer until it puts the caller's view scope of `collection` into `where`;
   * a store given one still set matches nothing (fail closed).
   */
  viewScopePending?: true;
  /** The ids `where` selects, when known already (remembered by the count cache): used instead of it. */
  ids?: readonly string[];
}
export type Where = Condition | { and: Where[] } | { or: Where[] } | { not: Where } | { through: Through };

/** The most ids a store that cannot join (MongoDB) fetches to answer a `through` condition. */
export const MAX_THROUGH_IDS = 50_000;

export type Direction = 'asc' | 'desc';
export interface SortKey {
  field: string;
  direction: Direction;
}

/** An explicit collation; without one, strings order case-insensitively with natural numbers. */
export interface Collation {
  locale: string;
  /** 1: base letters, 2: and accents, 3: and case. */
  strength?: 1 | 2 | 3;
  numericOrdering?: boolean;
}

export interface FindQuery {
  where?: Where;
  /** Every term must match as a word prefix in some searchable field. */
  text?: string;
  /** Default: id descending. The id is always the last tie-breaker. */
  sort?: SortKey[];
  collation?: Collation;
  skip?: number;
  limit?: number;
  /** Keyset paging on id: records strictly after this id in the sort direction of id. */
  after?: string;
  select?: string[];
  /**
   * How many records `where` and `text` match, when the caller knows it already (a count it just
   * read): a hint the store may use to choose how to read the page, never a filter.
   */
  matching?: number;
  /**
   * A page a client asked for through a list endpoint: the count cache may remember it (as ids)
   * until the next write, and between instances it may lag a write by the notice's trip. Reads
   * that coordinate work (jobs, leases, deliveries) leave it unset and always ask the store.
   */
  remember?: boolean;
}
export type FindResult = Doc[];

export interface CountQuery {
  where?: Where;
  text?: string;
}

/** Calendar units a date field is grouped by; keys are the local date the unit starts on (weeks start on Monday). */
export const DATE_BUCKETS = ['day', 'week', 'month', 'year'] as const;
export type DateBucket = (typeof DATE_BUCKETS)[number];

/** One grouping key: a field's value, or the start of the date bucket its value falls in. */
export interface GroupKey {
  field: string;
  bucket?: DateBucket;
}

export type Accumulator = 'sum' | 'avg' | 'min' | 'max';

/** One aggregated value per group: the sum of no values is 0; avg, min and max of none are null. */
export interface Measure {
  op: Accumulator;
  field: string;
}

/** A result column: `count`, a key field's name (`key.<field>`), or a measure (`sum.<field>`). */
export interface AggregateSort {
  column: 'count' | `key.${string}` | `${Accumulator}.${string}`;
  direction: Direction;
}

export interface AggregateQuery {
  where?: Where;
  text?: string;
  /** At most three keys; none: one group of every matching record (when there is one). */
  groupBy: GroupKey[];
  /** IANA name the date buckets are computed in. */
  timeZone: string;
  measures: Measure[];
  /** Nulls first ascending; ties are broken by the keys ascending, text in code-point order. */
  sort: AggregateSort[];
  limit: number;
  skip: number;
}

export interface AggregateGroup {
  /** Field name -> value (date buckets: `YYYY-MM-DD`); null for records without a value. */
  key: Record<string, unknown>;
  count: number;
  /** Op -> field -> value, for each measure asked. */
  values: Partial<Record<Accumulator, Record<string, number | string | null>>>;
}

export interface AggregateResult {
  groups: AggregateGroup[];
  /** Groups in all, before `skip` and `limit`. */
  totalGroups: number;
}

export type InsertInput = Doc;
/** Fields to set; `undefined` values are ignored, `null` clears. */
export type UpdateSet = Record<string, unknown>;
export type IncrementInput = Record<string, number>;

/** A counter row that numbers the rows of another collection (the event log's sequence). */
export interface NumberingCounter {
  /** The collection holding the counter row, its id, and the field counted up. */
  collection: string;
  id: string;
  field: string;
  /** The field of the numbered rows that takes the number. */
  into: string;
}

/** Index names a schema sync added and dropped. */
export interface SchemaChanges {
  added: string[];
  dropped: string[];
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres' | 'mongo';
  /**
   * Creates or extends collections, indexes and search indexes for the model, and drops the
   * indexes the plan no longer has; answers those changes (the server logs them).
   */
  init(model: AppModel): Promise<SchemaChanges>;
  find(collection: string, query: FindQuery): Promise<FindResult>;
  count(collection: string, query: CountQuery): Promise<number>;
  /** Groups the matching records and aggregates each group, in the database. */
  aggregate(collection: string, query: AggregateQuery): Promise<AggregateResult>;
  get(collection: string, id: string, where?: Where): Promise<Doc | null>;
  insert(collection: string, doc: InsertInput): Promise<Doc>;
  /** All or nothing. */
  insertMany(collection: string, docs: InsertInput[]): Promise<Doc[]>;
  /** Partial update of one record (optionally only if it also matches `where`); the record after, or null. */
  update(collection: string, id: string, set: UpdateSet, where?: Where): Promise<Doc | null>;
  /** Atomic in the database; `set` is applied in the same statement (e.g. updatedAt). */
  increment(collection: string, id: string, by: IncrementInput, set?: UpdateSet, where?: Where): Promise<Doc | null>;
  remove(collection: string, id: string, where?: Where): Promise<boolean>;
  /**
   * PostgreSQL: from now on, rows of `collection` inserted by `insertNumbered` take their number
   * as their transaction commits, so that the counter row is locked only for the commit itself
   * and not from the increment on (every instance then waits for the others' commits alone).
   * Idempotent; any instance may call it.
   */
  numberOnCommit?(collection: string, counter: NumberingCounter): Promise<void>;
  /**
   * Inserts `docs` in a transaction, numbered in order by `counter` (each takes the next value
   * of the counter row in `counter.into`), so that numbers follow commit order. Where absent
   * (or before `numberOnCommit`), the caller increments the counter and inserts the rows itself.
   * SQLite numbers the rows of a group commit's members from one read of the counter row, which
   * it writes once before the COMMIT.
   */
  insertNumbered?(collection: string, docs: InsertInput[], counter: NumberingCounter): Promise<boolean>;
  /** Runs `fn` in one transaction: everything it writes commits together or not at all. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /** Cheap round trip for health checks. */
  ping(): Promise<void>;
  /**
   * SQLite: a consistent copy of the database file at `path`, taken while writes go on (the online
   * backup API copies a few pages at a time, so a writer waits only moments).
   */
  backupFile?(path: string, progress?: (done: number, total: number) => void): Promise<void>;
  /** Runs `fn` on a read-only view of one consistent moment (PostgreSQL: REPEATABLE READ). */
  snapshot?<T>(fn: (view: Store) => Promise<T>): Promise<T>;
  /**
   * Whether another connection committed since the last call, when the store can tell cheaply
   * (SQLite: PRAGMA data_version); caches of this process then forget what they hold.
   */
  changedElsewhere?(): boolean;
  /**
   * What `load` reads from `collections`, kept in memory until any of them is written, by stores
   * that hear every write (the count cache); inside a transaction, and on other stores, `load`
   * runs every time. Callers must not change the value they get.
   */
  remember?<T>(key: string, collections: readonly string[], load: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A unique constraint refused a write; `field` names the constrained field. */
export class UniqueConflict extends Error {
  constructor(
    readonly collection: string,
    readonly field: string,
  ) {
    super(`${collection}.${field} must be unique`);
  }
}

/** A query the store will not answer at this size (a rule through a reference reaching too many records on MongoDB). */
export class QueryTooLarge extends Error {}

/** A number the database cannot hold came out of a computation (PostgreSQL: numeric overflow). */
export class ValueOutOfRange extends Error {}

/** The database cannot be reached. */
export class StoreUnavailable extends Error {}
