import type { AppModel } from '../model/types.js';
import type { Context } from '../telemetry/tracing.js';
import type {
  AggregateQuery,
  AggregateResult,
  CountQuery,
  Doc,
  FindQuery,
  FindResult,
  IncrementInput,
  InsertInput,
  NumberingCounter,
  SchemaChanges,
  Store,
  UpdateSet,
  Where,
} from './types.js';

/** The calls a wrapper sees pass, by name; writes change a collection. */
export type StoreCall = 'find' | 'count' | 'aggregate' | 'get' | StoreWrite | 'transaction' | 'ping';
export type StoreWrite = 'insert' | 'insertMany' | 'update' | 'increment' | 'remove';

/**
 * A store around another one (the count cache, the measurements): every call goes to `inner`
 * through `around`, which a wrapper overrides to add what it does; a transaction's store is
 * wrapped the same way by `wrapTransaction`. `inner` stays reachable for what needs the adapter.
 *
 * The fields are declared, not defined, and set by plain assignments: the six wrappers share this
 * constructor, and V8 sends a class field's definition seen with more than four classes to its
 * runtime on every construction (a transaction's store is built for each write).
 */
export abstract class StoreWrapper implements Store {
  declare readonly inner: Store;
  /** The adapter's kind, read once: a wrapper's inner store never changes. */
  declare readonly kind: Store['kind'];
  /**
   * The trace this store's calls belong to (a request's carrier, a traced transaction): the
   * nearest one beneath, taken at construction so finding it costs one read (tracedStore.ts).
   */
  declare carried: Context | undefined;

  constructor(inner: Store) {
    this.inner = inner;
    this.kind = inner.kind;
    this.carried = inner instanceof StoreWrapper ? inner.carried : undefined;
  }

  /** Runs one call of the inner store; `collection` is undefined for transactions and pings. */
  protected around<T>(_call: StoreCall, _collection: string | undefined, run: () => Promise<T>): Promise<T> {
    return run();
  }

  /** The same wrapper around a transaction's store. */
  protected abstract wrapTransaction(tx: Store): Store;

  init(model: AppModel): Promise<SchemaChanges> {
    return this.inner.init(model);
  }
  find(collection: string, query: FindQuery): Promise<FindResult> {
    return this.around('find', collection, () => this.inner.find(collection, query));
  }
  count(collection: string, query: CountQuery): Promise<number> {
    return this.around('count', collection, () => this.inner.count(collection, query));
  }
  aggregate(collection: string, query: AggregateQuery): Promise<AggregateResult> {
    return this.around('aggregate', collection, () => this.inner.aggregate(collection, query));
  }
  get(collection: string, id: string, where?: Where): Promise<Doc | null> {
    return this.around('get', collection, () => this.inner.get(collection, id, where));
  }
  insert(collection: string, doc: InsertInput): Promise<Doc> {
    return this.around('insert', collection, () => this.inner.insert(collection, doc));
  }
  insertMany(collection: string, docs: InsertInput[]): Promise<Doc[]> {
    return this.around('insertMany', collection, () => this.inner.insertMany(collection, docs));
  }
  update(collection: string, id: string, set: UpdateSet, where?: Where): Promise<Doc | null> {
    return this.around('update', collection, () => this.inner.update(collection, id, set, where));
  }
  increment(collection: string, id: string, by: IncrementInput, set?: UpdateSet, where?: Where): Promise<Doc | null> {
    return this.around('increment', collection, () => this.inner.increment(collection, id, by, set, where));
  }
  remove(collection: string, id: string, where?: Where): Promise<boolean> {
    return this.around('remove', collection, () => this.inner.remove(collection, id, where));
  }
  numberOnCommit(collection: string, counter: NumberingCounter): Promise<void> {
    return this.inner.numberOnCommit?.(collection, counter) ?? Promise.resolve();
  }
  /** An insert of `collection` to the wrappers (the counter row changes only as the transaction commits). */
  insertNumbered(collection: string, docs: InsertInput[], counter: NumberingCounter): Promise<boolean> {
    const insert = this.inner.insertNumbered?.bind(this.inner);
    if (!insert) return Promise.resolve(false);
    return this.around('insertMany', collection, () => insert(collection, docs, counter));
  }
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    return this.around('transaction', undefined, () =>
      this.inner.transaction((tx) => fn(tx === this.inner ? this : this.wrapTransaction(tx))),
    );
  }
  ping(): Promise<void> {
    return this.around('ping', undefined, () => this.inner.ping());
  }
  /** Backups and snapshots go to the adapter itself: they read, and only a backup asks for them. */
  get backupFile(): Store['backupFile'] {
    return this.inner.backupFile?.bind(this.inner);
  }
  get snapshot(): Store['snapshot'] {
    return this.inner.snapshot?.bind(this.inner);
  }
  changedElsewhere(): boolean {
    return this.inner.changedElsewhere?.() ?? false;
  }
  remember<T>(key: string, collections: readonly string[], load: () => Promise<T>): Promise<T> {
    return this.inner.remember ? this.inner.remember(key, collections, load) : load();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * The adapter beneath every wrapper: a backup copies the database as it is (every locale's
 * column, the trash), not records as operations see them.
 */
export function adapterOf(store: Store): Store {
  let current = store;
  while (current instanceof StoreWrapper) current = current.inner;
  return current;
}
