import { type Attributes, activeContext, type Context, inSpan, SpanKind, withContext } from '../telemetry/tracing.js';
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

interface Statement {
  name: string;
  attributes: Attributes;
}

type Statements = Map<StoreCall, Map<string | undefined, Statement>>;

/** Span names and attributes by store kind, call and collection, shared by a store and its transactions. */
const STATEMENTS: Record<Store['kind'], Statements> = { sqlite: new Map(), postgres: new Map(), mongo: new Map() };

/**
 * The adapter with a client span around each call, named `<operation> <collection>` after the
 * database semantic conventions (system, operation, collection; never a value). A transaction is
 * a span of its own, its statements beneath it. Only in the stack while tracing is on.
 *
 * A call's parent is the span active as it comes down the stack (a `TraceCarrier` above makes it
 * so); a transaction's store holds the transaction's span for the statements that come after an
 * await, when nothing is active any more.
 */
export class TracedStore extends StoreWrapper {
  private readonly system: string;
  private readonly operations: Record<StoreCall, string>;
  private readonly statements: Statements;

  constructor(
    inner: Store,
    /** The transaction's span, for a transaction's store. */
    readonly trace?: Context,
  ) {
    super(inner);
    // Calls through this store belong to its transaction's span, or to none beneath it.
    this.carried = trace;
    this.system = SYSTEM[inner.kind];
    this.operations = inner.kind === 'mongo' ? MONGO_OPERATION : SQL_OPERATION;
    this.statements = STATEMENTS[inner.kind];
  }

  protected override around<T>(call: StoreCall, collection: string | undefined, run: () => Promise<T>): Promise<T> {
    const parent = activeContext() ?? this.trace;
    if (parent === undefined) return run();
    const statement = this.statement(call, collection);
    return inSpan(statement.name, { kind: SpanKind.CLIENT, attributes: statement.attributes, parent }, run);
  }

  /** A call's span name and attributes, made once per call and collection (the SDK copies them into each span). */
  private statement(call: StoreCall, collection: string | undefined): Statement {
    let byCollection = this.statements.get(call);
    if (byCollection === undefined) {
      byCollection = new Map();
      this.statements.set(call, byCollection);
    }
    let statement = byCollection.get(collection);
    if (statement === undefined) {
      const operation = this.operations[call];
      const attributes: Attributes = { 'db.system.name': this.system, 'db.operation.name': operation };
      if (collection !== undefined) attributes['db.collection.name'] = collection;
      statement = { name: collection === undefined ? operation : `${operation} ${collection}`, attributes };
      Object.freeze(attributes);
      // Collections are the model's and the store's own tables: a few dozen per app.
      if (byCollection.size < 1_000) byCollection.set(collection, statement);
    }
    return statement;
  }

  override transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    const parent = activeContext() ?? this.trace;
    if (parent === undefined) return this.inner.transaction((tx) => fn(tx === this.inner ? this : new TracedStore(tx)));
    return inSpan('transaction', { attributes: { 'db.system.name': this.system }, parent }, (_span, context) =>
      this.inner.transaction((tx) => fn(tx === this.inner ? this : new TracedStore(tx, context))),
    );
  }

  protected wrapTransaction(tx: Store): Store {
    return new TracedStore(tx);
  }
}

/**
 * The shared store as one request (a hook, an endpoint, a job run) uses it: every call comes down
 * the stack with `trace` active, so the spans the database calls make are its children. Built
 * only in a trace (one the sampler left out records nothing); a transaction's store carries its
 * own span from there.
 */
export class TraceCarrier extends StoreWrapper {
  constructor(
    inner: Store,
    readonly trace: Context,
  ) {
    super(inner);
    this.carried = trace;
  }

  protected override around<T>(_call: StoreCall, _collection: string | undefined, run: () => Promise<T>): Promise<T> {
    return withContext(this.trace, run);
  }

  protected wrapTransaction(tx: Store): Store {
    return tx;
  }
}

/** The span a store's calls belong to: a carrier's, or a traced transaction's; undefined outside a trace. */
export function traceOf(store: Store): Context | undefined {
  return store instanceof StoreWrapper ? store.carried : undefined;
}

/** `store` carrying `trace` instead of what it carried (unchanged outside a trace). */
export function carryTrace(store: Store, trace: Context | undefined): Store {
  if (trace === undefined) return store;
  return new TraceCarrier(store instanceof TraceCarrier ? store.inner : store, trace);
}
