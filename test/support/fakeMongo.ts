import { EventEmitter } from 'node:events';
import { Aggregator, Query, updateOne } from 'mingo';
import { type MongoClient, MongoServerError, MongoTopologyClosedError } from 'mongodb';

// An in-memory stand-in for the parts of the MongoDB driver MongoStore calls, with MongoDB's
// query language from mingo, unique indexes, collation sorts and all-or-nothing transactions.
// It lets the whole conformance suite exercise the adapter's own logic where no server can run;
// it is not MongoDB, so the suite against a real replica set (MONGODB_URL) remains the proof.

type Doc = Record<string, unknown> & { _id: string };
type Sort = [string, 1 | -1][];
interface FindOptions {
  sort?: Sort;
  collation?: { locale: string; strength?: number; numericOrdering?: boolean };
  projection?: Record<string, 1>;
  skip?: number;
  limit?: number;
}

const matches = (filter: object) => {
  const query = new Query(filter as Record<string, unknown>);
  return (doc: Doc) => query.test(doc);
};

function rank(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') return 1;
  if (typeof value === 'string') return 2;
  if (Array.isArray(value)) return 4;
  if (typeof value === 'object') return 3;
  return 5;
}

function comparator(sort: Sort, collation: FindOptions['collation']) {
  const collator = collation
    ? new Intl.Collator(collation.locale.replace(/_/g, '-'), {
        sensitivity: collation.strength === 1 ? 'base' : collation.strength === 2 ? 'accent' : 'variant',
        numeric: collation.numericOrdering ?? false,
        caseFirst: 'lower',
      })
    : undefined;
  const compare = (a: unknown, b: unknown): number => {
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra - rb;
    if (typeof a === 'string' && typeof b === 'string')
      return collator ? collator.compare(a, b) : a < b ? -1 : a > b ? 1 : 0;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
    return 0;
  };
  return (x: Doc, y: Doc) => {
    for (const [field, direction] of sort) {
      const order = compare(x[field], y[field]);
      if (order !== 0) return order * direction;
    }
    return 0;
  };
}

class FakeCollection {
  docs: Doc[] = [];
  /** The keys of each unique index, by name; a record missing the last key is not indexed (partial). */
  readonly unique = new Map<string, string[]>();
  readonly indexes = new Map<string, Record<string, unknown>>([['_id_', { _id: 1 }]]);

  constructor(
    private readonly name: string,
    /** Tells the database's change streams of a write (insert, update, delete). */
    private readonly changed: (collection: string, operationType: string) => void = () => undefined,
  ) {}

  async createIndex(keys: Record<string, unknown>, options: { unique?: boolean; name?: string } = {}): Promise<string> {
    const name = options.name ?? Object.keys(keys).join('_');
    const existing = this.indexes.get(name);
    if (existing && JSON.stringify(existing) !== JSON.stringify(keys))
      throw new MongoServerError({
        message: `An existing index has the same name as the requested index: ${name}`,
        code: 86,
      });
    if (options.unique) this.unique.set(name, Object.keys(keys));
    this.indexes.set(name, keys);
    return name;
  }

  listIndexes() {
    return { toArray: async () => [...this.indexes].map(([name, key]) => ({ name, key })) };
  }

  async dropIndex(name: string): Promise<void> {
    this.indexes.delete(name);
    this.unique.delete(name);
  }

  private checkUnique(doc: Doc): void {
    for (const fields of [['_id'], ...this.unique.values()]) {
      if (doc[fields.at(-1)!] === undefined) continue;
      const same = (other: Doc) => fields.every((field) => (other[field] ?? null) === (doc[field] ?? null));
      if (this.docs.some((other) => other !== doc && same(other))) {
        throw new MongoServerError({
          message: `E11000 duplicate key error collection: ${this.name}`,
          code: 11000,
          keyPattern: Object.fromEntries(fields.map((field) => [field, 1])),
        });
      }
    }
  }

  async insertOne(doc: Doc): Promise<{ insertedId: string }> {
    const copy = structuredClone(doc);
    this.checkUnique(copy);
    this.docs.push(copy);
    this.changed(this.name, 'insert');
    return { insertedId: copy._id };
  }

  async insertMany(docs: Doc[]): Promise<{ insertedCount: number }> {
    for (const doc of docs) await this.insertOne(doc);
    return { insertedCount: docs.length };
  }

  find(filter: object, options: FindOptions = {}) {
    return {
      toArray: async (): Promise<Doc[]> => {
        let found = this.docs.filter(matches(filter));
        if (options.sort) found = [...found].sort(comparator(options.sort, options.collation));
        found = found.slice(
          options.skip ?? 0,
          options.limit === undefined ? undefined : (options.skip ?? 0) + options.limit,
        );
        return found.map((doc) => {
          const copy = structuredClone(doc);
          if (!options.projection) return copy;
          return Object.fromEntries(
            Object.entries(copy).filter(([key]) => key === '_id' || key in options.projection!),
          ) as Doc;
        });
      },
    };
  }

  aggregate(pipeline: Record<string, unknown>[]) {
    return { toArray: async () => structuredClone(new Aggregator(pipeline).run(this.docs)) };
  }

  async countDocuments(filter: object): Promise<number> {
    return this.docs.filter(matches(filter)).length;
  }

  async findOne(filter: object): Promise<Doc | null> {
    const found = this.docs.find(matches(filter));
    return found ? structuredClone(found) : null;
  }

  async findOneAndUpdate(
    filter: object,
    update: Record<string, unknown>,
    options: { returnDocument?: 'after' | 'before' } = {},
  ): Promise<Doc | null> {
    const found = this.docs.find(matches(filter));
    if (!found) return null;
    const before = structuredClone(found);
    updateOne([found], { _id: found._id }, update as never);
    try {
      this.checkUnique(found);
    } catch (error) {
      for (const key of Object.keys(found)) delete found[key];
      Object.assign(found, before);
      throw error;
    }
    this.changed(this.name, 'update');
    return structuredClone(options.returnDocument === 'after' ? found : before);
  }

  async updateOne(filter: object, update: Record<string, unknown>): Promise<{ modifiedCount: number }> {
    return { modifiedCount: (await this.findOneAndUpdate(filter, update)) ? 1 : 0 };
  }

  async deleteOne(filter: object): Promise<{ deletedCount: number }> {
    const index = this.docs.findIndex(matches(filter));
    if (index < 0) return { deletedCount: 0 };
    this.docs.splice(index, 1);
    this.changed(this.name, 'delete');
    return { deletedCount: 1 };
  }
}

/**
 * A change stream as the driver's emits it: `change` for each write to the database, and
 * `resumeTokenChanged` for every answer of the server (each `maxAwaitTimeMS` without changes).
 * A deployment without change streams refuses the first read, as a standalone server does.
 */
class FakeChangeStream extends EventEmitter {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: FakeDb,
    private readonly supported: boolean,
    private readonly maxAwaitTimeMS: number,
  ) {
    super();
    this.on('newListener', (event) => {
      if (event !== 'change' || this.timer) return;
      if (!this.supported) {
        setImmediate(() => this.emit('error', notSupported()));
        return;
      }
      db.streams.add(this);
      this.timer = setInterval(() => this.emit('resumeTokenChanged', {}), this.maxAwaitTimeMS);
      setImmediate(() => this.emit('resumeTokenChanged', {}));
    });
  }

  async tryNext(): Promise<null> {
    if (!this.supported) throw notSupported();
    return null;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.db.streams.delete(this);
    this.emit('close');
    this.removeAllListeners();
  }
}

const notSupported = () =>
  new MongoServerError({ message: 'The $changeStream stage is only supported on replica sets', code: 40573 });

class FakeDb {
  readonly collections = new Map<string, FakeCollection>();
  readonly streams = new Set<FakeChangeStream>();

  /** Once the client is closed, every operation fails as the driver's do: the store answers 503. */
  constructor(
    private readonly client: { closed: boolean },
    private readonly changeStreams = false,
  ) {}

  private changed = (collection: string, operationType: string) => {
    for (const stream of this.streams) stream.emit('change', { ns: { db: 'test', coll: collection }, operationType });
  };

  watch(_pipeline: unknown[] = [], options: { maxAwaitTimeMS?: number } = {}): FakeChangeStream {
    return new FakeChangeStream(this, this.changeStreams, options.maxAwaitTimeMS ?? 1000);
  }

  async createCollection(name: string): Promise<void> {
    if (this.collections.has(name))
      throw new MongoServerError({ message: `Collection ${name} already exists`, code: 48 });
    this.collections.set(name, new FakeCollection(name, this.changed));
  }

  collection(name: string): FakeCollection {
    if (!this.collections.has(name)) this.collections.set(name, new FakeCollection(name, this.changed));
    const collection = this.collections.get(name)!;
    const client = this.client;
    return new Proxy(collection, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (client.closed) throw new MongoTopologyClosedError();
          return value.apply(target, args);
        };
      },
    });
  }

  async command(): Promise<{ ok: 1 }> {
    if (this.client.closed) throw new MongoTopologyClosedError();
    return { ok: 1 };
  }
}

/** Transactions keep a copy of every collection and put it back when the callback throws. */
class FakeSession {
  constructor(private readonly db: FakeDb) {}

  async withTransaction<T>(fn: () => Promise<T>): Promise<T> {
    const snapshot = new Map(
      [...this.db.collections].map(([name, collection]) => [name, structuredClone(collection.docs)]),
    );
    try {
      return await fn();
    } catch (error) {
      for (const [name, collection] of this.db.collections) collection.docs = snapshot.get(name) ?? [];
      throw error;
    }
  }

  async endSession(): Promise<void> {}
}

/**
 * A client of a deployment of its own; `deployment` shares one between clients (a server and
 * another writer). `changeStreams`: a replica set (change streams) rather than a standalone server.
 */
export function fakeMongoClient(
  options: { changeStreams?: boolean; deployment?: Map<string, FakeDb> } = {},
): MongoClient {
  const dbs = options.deployment ?? new Map<string, FakeDb>();
  const state = { closed: false };
  const db = (name: string) => {
    if (!dbs.has(name)) dbs.set(name, new FakeDb(state, options.changeStreams));
    return dbs.get(name)!;
  };
  let last: FakeDb | undefined;
  return {
    db: (name: string) => (last = db(name)),
    startSession: () => new FakeSession(last!),
    close: async () => {
      state.closed = true;
      for (const fake of dbs.values()) for (const stream of [...fake.streams]) await stream.close();
    },
  } as unknown as MongoClient;
}

/** The databases of one stand-in deployment, for clients that share them. */
export const fakeMongoDeployment = () => new Map<string, FakeDb>();
