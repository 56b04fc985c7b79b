import { type Attributes, inSpan, inTrace, SpanKind } from '../telemetry/tracing.js';
import { type StoreCall, StoreWrapper } from './storeWrapper.js';
import type { Store } from './types.js';

/** `db.system.name` of each store, as the semantic conventions spell it. */
const SYSTEM: Record<Store['kind'], string> = { sqlite: 'sqlite', postgres: 'postgresql', mongo: 'mongodb' };

/** `db.operation.name` of each call: the SQL verb, or the MongoDB command the adapter sends. */
const SQL_OPERATION: Record<StoreCall, string> = {
  find: 'SELECT',
  count: 'SELECT',
  aggregate: 'SELECT',
  get: 'SELECT',
  insert: 'INSERT',
  insertMany: 'INSERT',
  update: 'UPDATE',
  increment: 'UPDATE',
  remove: 'DELETE',
  transaction: 'transaction',
  ping: 'SELECT',
};
const MONGO_OPERATION: Record<StoreCall, string> = {
  find: 'find',
  count: 'countDocuments',
  aggregate: 'aggregate',
  get: 'findOne',
  insert: 'insertOne',
  insertMany: 'insertMany',
  update: 'findOneAndUpdate',
  increment: 'findOneAndUpdate',
  remove: 'deleteOne',
  transaction: 'transaction',
  ping: 'ping',
};

/**
 * The adapter with a client span around each call, named `<operation> <collection>` after the
 * database semantic conventions (system, operation, collection; never a value). A transaction is
 * a span of its own, its statements beneath it. Only in the stack while tracing is on.
 */
export class TracedStore extends StoreWrapper {
  private readonly system: string;
  private readonly operations: Record<StoreCall, string>;

  constructor(inner: Store) {
    super(inner);
    this.system = SYSTEM[inner.kind];
    this.operations = inner.kind === 'mongo' ? MONGO_OPERATION : SQL_OPERATION;
  }

  protected override around<T>(call: StoreCall, collection: string | undefined, run: () => Promise<T>): Promise<T> {
    if (!inTrace()) return run();
    const operation = this.operations[call];
    const attributes: Attributes = { 'db.system.name': this.system, 'db.operation.name': operation };
    if (collection !== undefined) attributes['db.collection.name'] = collection;
    const name = collection === undefined ? operation : `${operation} ${collection}`;
    return inSpan(name, { kind: call === 'transaction' ? SpanKind.INTERNAL : SpanKind.CLIENT, attributes }, run);
  }

  protected wrapTransaction(tx: Store): Store {
    return new TracedStore(tx);
  }
}
