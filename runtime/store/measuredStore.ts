import type { AppModel } from '../model/types.js';
import type {
  AggregateQuery,
  AggregateResult,
  CountQuery,
  Doc,
  FindQuery,
  FindResult,
  IncrementInput,
  InsertInput,
  SchemaChanges,
  Store,
  UpdateSet,
  Where,
} from './types.js';

/** Receives the duration of each store call. */
export type StoreObserver = (store: Store['kind'], operation: string, outcome: 'ok' | 'error', seconds: number) => void;

/**
 * A store that times every call for the operator metrics and otherwise passes it through; the
 * store of a transaction is measured too. `inner` stays reachable for what needs the adapter.
 */
export class MeasuredStore implements Store {
  constructor(
    readonly inner: Store,
    private readonly observe: StoreObserver,
  ) {}

  get kind(): Store['kind'] {
    return this.inner.kind;
  }

  private async timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      this.observe(this.inner.kind, operation, 'ok', (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      this.observe(this.inner.kind, operation, 'error', (performance.now() - started) / 1000);
      throw error;
    }
  }

  init(model: AppModel): Promise<SchemaChanges> {
    return this.inner.init(model);
  }
  find(collection: string, query: FindQuery): Promise<FindResult> {
    return this.timed('find', () => this.inner.find(collection, query));
  }
  count(collection: string, query: CountQuery): Promise<number> {
    return this.timed('count', () => this.inner.count(collection, query));
  }

  aggregate(collection: string, query: AggregateQuery): Promise<AggregateResult> {
    return this.timed('aggregate', () => this.inner.aggregate(collection, query));
  }
  get(collection: string, id: string, where?: Where): Promise<Doc | null> {
    return this.timed('get', () => this.inner.get(collection, id, where));
  }
  insert(collection: string, doc: InsertInput): Promise<Doc> {
    return this.timed('insert', () => this.inner.insert(collection, doc));
  }
  insertMany(collection: string, docs: InsertInput[]): Promise<Doc[]> {
    return this.timed('insertMany', () => this.inner.insertMany(collection, docs));
  }
  update(collection: string, id: string, set: UpdateSet, where?: Where): Promise<Doc | null> {
    return this.timed('update', () => this.inner.update(collection, id, set, where));
  }
  increment(collection: string, id: string, by: IncrementInput, set?: UpdateSet, where?: Where): Promise<Doc | null> {
    return this.timed('increment', () => this.inner.increment(collection, id, by, set, where));
  }
  remove(collection: string, id: string, where?: Where): Promise<boolean> {
    return this.timed('remove', () => this.inner.remove(collection, id, where));
  }
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    return this.timed('transaction', () =>
      this.inner.transaction((tx) => fn(tx === this.inner ? this : new MeasuredStore(tx, this.observe))),
    );
  }
  ping(): Promise<void> {
    return this.timed('ping', () => this.inner.ping());
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
