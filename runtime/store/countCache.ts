import { activeContext } from '../telemetry/tracing.js';
import { foldInserted } from './common/foldAggregate.js';
import { hasThrough, throughCollections, withKnownIds } from './common/throughIds.js';
import { type StoreCall, StoreWrapper } from './storeWrapper.js';
import { TraceCarrier } from './tracedStore.js';
import type { AggregateQuery, AggregateResult, CountQuery, Doc, FindQuery, FindResult, Store, Where } from './types.js';

/** A transaction's writes by collection: the records it inserted, or undefined once it did more than insert. */
type Written = Map<string, Doc[] | undefined>;
/** A transaction that inserted more records than this is not folded into remembered aggregations. */
const MAX_FOLDED_RECORDS = 1000;

/** What vouches for a cache across instances: the bus (runtime/cluster/bus.ts). */
export interface StalenessBound {
  /** Every other instance's notice sent more than the staleness bound ago has surely arrived. */
  readonly trusted: boolean;
}

/** Counts remembered at most, over every collection (least recently used go first). */
export const MAX_CACHED_COUNTS = 10_000;
/**
 * Values remembered at most (a session's caller, the grants of a user): enough for each of ten
 * thousand realtime streams to keep both while its rules are asked again every few seconds (in
 * turn, so that a smaller bound would forget every one before its turn came again); and their
 * weight, one each or an array's length.
 */
export const MAX_REMEMBERED_VALUES = 30_000;
export const MAX_REMEMBERED_WEIGHT = 200_000;
/** Ids remembered at most over every list a rule through a reference selects (about 30 bytes each). */
export const MAX_REMEMBERED_IDS = 200_000;
/** A rule selecting more ids than this is left to the store's subquery, not remembered. */
export const MAX_IDS_PER_LIST = 5_000;
/** Aggregations remembered at most, and their groups over all of them (a group is about 200 bytes). */
export const MAX_CACHED_AGGREGATES = 1_000;
export const MAX_REMEMBERED_GROUPS = 50_000;
/** Pages of lists remembered at most, and their ids over all of them (about 70 bytes each). */
export const MAX_REMEMBERED_PAGES = 2_000;
export const MAX_REMEMBERED_PAGE_IDS = 50_000;
/** Longer pages (exports, reads of a whole collection) are read each time. */
export const MAX_PAGE_LENGTH = 200;

/**
 * Values kept under the generation they were read in, the least recently used going first when
 * there are more than `maxEntries` or their weights add up to more than `maxWeight`. A value read
 * moves to the newest end only once it has fallen into the older half: moving it is a delete and
 * a set on a map of up to tens of thousands of entries, which every realtime event paid for each
 * stream's grants and session. So the order is that of use to within half the entries, and a
 * value in use never reaches the oldest end.
 */
class GenerationMemory<V> {
  private readonly entries = new Map<string, { generation: number; value: V; weight: number; stamp: number }>();
  private weight = 0;
  /** Counts the entries placed at the newest end; an entry's stamp is the count when it was. */
  private placed = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight: number,
    private readonly weigh: (value: V, key: string) => number,
  ) {}

  /** The value kept under `generation`, made the most recently used; undefined when there is none. */
  get(key: string, generation: number): { value: V } | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.generation !== generation) return undefined;
    if (this.placed - entry.stamp > this.entries.size / 2) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      entry.stamp = ++this.placed;
    }
    return entry;
  }

  set(key: string, generation: number, value: V): void {
    const weight = this.weigh(value, key);
    this.forget(key);
    if (weight > this.maxWeight) return;
    this.entries.set(key, { generation, value, weight, stamp: ++this.placed });
    this.weight += weight;
    while (this.entries.size > this.maxEntries || this.weight > this.maxWeight)
      this.forget(this.entries.keys().next().value!);
  }

  forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.weight -= entry.weight;
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.weight = 0;
  }

  /** The entries whose key starts with `prefix`, as [key, generation, value]. */
  withPrefix(prefix: string): [string, number, V][] {
    const found: [string, number, V][] = [];
    for (const [key, entry] of this.entries)
      if (key.startsWith(prefix)) found.push([key, entry.generation, entry.value]);
    return found;
  }
}

/**
 * A remembered aggregation; with its question when the records a write adds may be folded in
 * (it was read while no write to its collection was under way, so it holds no write by halves).
 */
interface RememberedAggregate {
  result: AggregateResult;
  foldable?: AggregateQuery;
}

/**
 * Exact counts, remembered per collection and query (the caller's access constraint is part of
 * the query) until the next write to that collection. Each collection has a generation, raised
 * after every write commits; a count is kept only under the generation it was read in, so a
 * count that raced a commit is never kept. `onInvalidate` tells the other instances (Redis),
 * which raise theirs through `invalidate(collection, true)`.
 */
export class CountCache {
  private readonly generations = new Map<string, number>();
  private readonly entries = new Map<string, { generation: number; count: number }>();
  private readonly remembered: GenerationMemory<unknown>;
  /** Id lists of rules through references (undefined: too many to keep). */
  private readonly idLists = new GenerationMemory<readonly string[] | undefined>(
    Number.POSITIVE_INFINITY,
    MAX_REMEMBERED_IDS,
    (ids) => ids?.length ?? 0,
  );
  private readonly aggregates = new GenerationMemory<RememberedAggregate>(
    MAX_CACHED_AGGREGATES,
    MAX_REMEMBERED_GROUPS,
    ({ result }) => result.groups.length,
  );
  /** Writes under way, by collection (a transaction counts from its first write to its end). */
  private readonly writing = new Map<string, number>();
  /** Pages of lists, as the ids of their records in order; a long query weighs as its length in ids. */
  private readonly pages = new GenerationMemory<readonly string[]>(
    MAX_REMEMBERED_PAGES,
    MAX_REMEMBERED_PAGE_IDS,
    (ids, key) => ids.length + Math.ceil(key.length / 64),
  );
  /** Tells the other instances of a write here; until it is set, the written collections wait in `unannounced`. */
  private onInvalidate?: (collection: string) => void;
  private readonly unannounced = new Set<string>();
  /** Whether another process wrote to the database since the last call (the embedded store tells). */
  changedElsewhere?: () => boolean;
  /**
   * Whether every other instance's notices up to `maxStalenessMs` ago have surely arrived (the bus
   * between instances). While it says no, nothing cached is used: every read goes to the store.
   */
  trust?: StalenessBound;
  /** Answers from memory and reads that went to the store (counts and remembered values). */
  hits = 0;
  misses = 0;

  constructor(private readonly maxEntries = MAX_CACHED_COUNTS) {
    this.remembered = new GenerationMemory<unknown>(MAX_REMEMBERED_VALUES, MAX_REMEMBERED_WEIGHT, (value) =>
      Array.isArray(value) ? value.length + 1 : 1,
    );
  }

  generation(collection: string): number {
    return this.generations.get(collection) ?? 0;
  }

  /** Forgets everything when another process wrote, or when the bus cannot vouch for it; call before reading. */
  sync(): void {
    if (this.changedElsewhere?.() || (this.trust && !this.trust.trusted)) this.clear();
  }

  /**
   * A value read from `collections` (the caller of a session token: its user and the revocation
   * list), loaded once and kept until the next write to any of them, like a count.
   */
  async remember<T>(key: string, collections: readonly string[], load: () => Promise<T>): Promise<T> {
    this.sync();
    const generation = this.generationOf(collections);
    const entry = this.remembered.get(key, generation);
    if (entry) {
      this.hits++;
      return entry.value as T;
    }
    this.misses++;
    const value = await load();
    if (this.generationOf(collections) === generation) this.remembered.set(key, generation, value);
    return value;
  }

  /**
   * The ids a rule through a reference selects, read from `collections` and kept until any of
   * them is written; undefined when there are more than MAX_IDS_PER_LIST (`load` reads one more).
   */
  async rememberIds(
    key: string,
    collections: readonly string[],
    load: (limit: number) => Promise<string[]>,
  ): Promise<readonly string[] | undefined> {
    this.sync();
    const generation = this.generationOf(collections);
    const entry = this.idLists.get(key, generation);
    if (entry) {
      this.hits++;
      return entry.value;
    }
    this.misses++;
    const found = await load(MAX_IDS_PER_LIST + 1);
    const ids = found.length > MAX_IDS_PER_LIST ? undefined : found;
    if (this.generationOf(collections) === generation) this.idLists.set(key, generation, ids);
    return ids;
  }

  /**
   * An aggregation's result, read from `collections` and kept until any of them is written, like
   * a count: dashboards ask the same question again and again between writes. Bounded by entries
   * and by groups; callers must not change the result they get.
   */
  async rememberAggregate(
    key: string,
    collections: readonly string[],
    load: () => Promise<AggregateResult>,
    query?: AggregateQuery,
  ): Promise<AggregateResult> {
    this.sync();
    const generation = this.generationOf(collections);
    const entry = this.aggregates.get(key, generation);
    if (entry) {
      this.hits++;
      return entry.value.result;
    }
    this.misses++;
    const quiet = this.quiet(collections);
    const result = await load();
    if (this.generationOf(collections) === generation)
      this.aggregates.set(key, generation, { result, foldable: quiet && this.quiet(collections) ? query : undefined });
    return result;
  }

  /** Whether no write to any of `collections` is under way. */
  private quiet(collections: readonly string[]): boolean {
    return collections.every((collection) => !this.writing.has(collection));
  }

  /** A write to `collection` begins (a transaction's first write to it). */
  beginWrite(collection: string): void {
    this.writing.set(collection, (this.writing.get(collection) ?? 0) + 1);
  }

  /**
   * A write to `collection` ended. When it committed and only inserted (`inserted`), the remembered
   * aggregations of the collection that can take its records are kept, with them folded in
   * (foldInserted: exact or not at all); then the collection's generation rises, as after any write.
   */
  endWrite(collection: string, inserted?: readonly Doc[]): void {
    const left = (this.writing.get(collection) ?? 1) - 1;
    if (left > 0) this.writing.set(collection, left);
    else this.writing.delete(collection);
    const generation = this.generation(collection);
    const folded: [string, RememberedAggregate][] = [];
    if (inserted)
      for (const [key, at, { result, foldable }] of this.aggregates.withPrefix(`${collection}\u0000`)) {
        const after = at === generation && foldable ? foldInserted(foldable, result, inserted) : undefined;
        if (after) folded.push([key, { result: after, foldable }]);
      }
    this.invalidate(collection);
    for (const [key, value] of folded) this.aggregates.set(key, generation + 1, value);
  }

  /**
   * A page of a list, remembered as the ids it held in order until any of `collections` is
   * written: asked again, it costs reading those records by id (`reread`), however the list was
   * filtered and sorted. A re-read that misses a record or raced a write is not answered: the
   * page is read anew.
   */
  async rememberPage(
    key: string,
    collections: readonly string[],
    load: () => Promise<Doc[]>,
    reread: (ids: readonly string[]) => Promise<Doc[]>,
  ): Promise<Doc[]> {
    this.sync();
    const generation = this.generationOf(collections);
    const entry = this.pages.get(key, generation);
    if (entry) {
      const docs = await reread(entry.value);
      if (docs.length === entry.value.length && this.generationOf(collections) === generation) {
        this.hits++;
        return docs;
      }
    }
    this.misses++;
    const docs = await load();
    if (
      this.generationOf(collections) === generation &&
      docs.length <= MAX_PAGE_LENGTH &&
      docs.every((doc) => typeof doc.id === 'string')
    )
      this.pages.set(
        key,
        generation,
        docs.map((doc) => doc.id as string),
      );
    return docs;
  }

  /** The sum of the collections' generations: it moves whenever one of them does (they only rise). */
  private generationOf(collections: readonly string[]): number {
    let generation = 0;
    for (const collection of collections) generation += this.generation(collection);
    return generation;
  }

  get(key: string, collection: string): number | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.generation !== this.generation(collection)) {
      this.misses++;
      return undefined;
    }
    // Most recently used last.
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits++;
    return entry.count;
  }

  /** A remembered count, if there is one, without counting the look-up as a hit or a miss. */
  peek(key: string, collection: string): number | undefined {
    this.sync();
    const entry = this.entries.get(key);
    return entry && entry.generation === this.generation(collection) ? entry.count : undefined;
  }

  set(key: string, collection: string, generation: number, count: number): void {
    if (generation !== this.generation(collection)) return;
    this.entries.delete(key);
    this.entries.set(key, { generation, count });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  invalidate(collection: string, fromElsewhere = false): void {
    this.generations.set(collection, this.generation(collection) + 1);
    if (fromElsewhere) return;
    if (this.onInvalidate) this.onInvalidate(collection);
    else this.unannounced.add(collection);
  }

  /**
   * From now on every write here is told through `announce` (the bus), and so are those made
   * before the bus was there (the start's migrations, job schedules and first administrator):
   * the servers' connections do not announce their writes otherwise.
   */
  announceTo(announce: (collection: string) => void): void {
    this.onInvalidate = announce;
    for (const collection of this.unannounced) announce(collection);
    this.unannounced.clear();
  }

  /** Everything: another process wrote to the database (SQLite tells). */
  clear(): void {
    for (const collection of this.generations.keys()) this.invalidate(collection, true);
    this.entries.clear();
    this.remembered.clear();
    this.idLists.clear();
    this.aggregates.clear();
    this.pages.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * A store whose `count` and `aggregate` answer from the CountCache when they can; every write (and every
 * transaction, once it ends) raises the written collections' generations. Counts inside a
 * transaction see its own writes and always go to the store.
 */
const WRITES = new Set<StoreCall>(['insert', 'insertMany', 'update', 'increment', 'remove']);

export class CountCachingStore extends StoreWrapper {
  constructor(
    inner: Store,
    private readonly cache: CountCache,
    /** Inside a transaction: the collections it wrote (and what it inserted), raised when it ends. */
    private readonly touched?: Written,
  ) {
    super(inner);
    if (!touched) cache.changedElsewhere ??= () => inner.changedElsewhere?.() ?? false;
  }

  /**
   * A page a list endpoint asks for (`remember`) is remembered as its ids until a collection it
   * read is written (CountCache.rememberPage); other reads, longer ones, and reads inside a
   * transaction go to the store.
   */
  override async find(collection: string, query: FindQuery): Promise<FindResult> {
    if (this.touched) return this.inner.find(collection, query);
    const inner = this.innerNow();
    if (
      !query.remember ||
      query.limit === undefined ||
      query.limit > MAX_PAGE_LENGTH ||
      (query.select && !query.select.includes('id'))
    )
      return this.readPage(inner, collection, query);
    const collections = hasThrough(query.where) ? [collection, ...throughCollections(query.where)] : [collection];
    return this.cache.rememberPage(
      `page\u0000${collection}\u0000${JSON.stringify(query)}`,
      collections,
      () => this.readPage(inner, collection, query),
      (ids) => this.rereadPage(inner, collection, ids, query.select),
    );
  }

  /**
   * The inner store for calls that may come after an await: carrying the span active now, so a
   * traced request's reads stay its children (nothing is active after an await).
   */
  private innerNow(): Store {
    const active = activeContext();
    return active === undefined ? this.inner : new TraceCarrier(this.inner, active);
  }

  private async readPage(inner: Store, collection: string, query: FindQuery): Promise<FindResult> {
    // A sorted page may be read another way when the store knows how many records match (the count
    // a list asks for beside it, when it is remembered); only a page of a sort costs the look-up.
    const matching =
      query.sort && query.sort.length > 1 && query.after === undefined
        ? this.cache.peek(`${collection}\u0000${JSON.stringify({ where: query.where, text: query.text })}`, collection)
        : undefined;
    const hinted = matching === undefined ? query : Object.assign({}, query, { matching });
    if (!hasThrough(query.where)) return inner.find(collection, hinted);
    return inner.find(collection, Object.assign({}, hinted, { where: await this.knownIds(inner, query.where) }));
  }

  /** The records of `ids` in that order, those still there. */
  private async rereadPage(
    inner: Store,
    collection: string,
    ids: readonly string[],
    select?: string[],
  ): Promise<FindResult> {
    const docs = await inner.find(collection, {
      where: { field: 'id', op: 'in', value: [...ids] },
      select,
      limit: ids.length,
    });
    const byId = new Map(docs.map((doc) => [doc.id, doc]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** Outside a transaction, from the cache; inside one, read again (it may have written them). */
  override remember<T>(key: string, collections: readonly string[], load: () => Promise<T>): Promise<T> {
    return this.touched ? load() : this.cache.remember(key, collections, load);
  }

  override async count(collection: string, query: CountQuery): Promise<number> {
    if (this.touched) return this.inner.count(collection, query);
    const key = `${collection}\u0000${JSON.stringify(query)}`;
    // A count through a reference depends on the referenced collections too: kept until any changes.
    if (hasThrough(query.where)) {
      const collections = [collection, ...throughCollections(query.where)];
      const inner = this.innerNow();
      return this.cache.remember(key, collections, async () =>
        inner.count(collection, Object.assign({}, query, { where: await this.knownIds(inner, query.where) })),
      );
    }
    this.cache.sync();
    const cached = this.cache.get(key, collection);
    if (cached !== undefined) return cached;
    const generation = this.cache.generation(collection);
    const count = await this.inner.count(collection, query);
    this.cache.set(key, collection, generation, count);
    return count;
  }

  /** Aggregations answer from memory until a collection they read is written (inside a transaction, never). */
  override async aggregate(collection: string, query: AggregateQuery): Promise<AggregateResult> {
    if (this.touched) return this.inner.aggregate(collection, query);
    const key = `${collection}\u0000${JSON.stringify(query)}`;
    if (!hasThrough(query.where))
      return this.cache.rememberAggregate(key, [collection], () => this.inner.aggregate(collection, query), query);
    const collections = [collection, ...throughCollections(query.where)];
    const inner = this.innerNow();
    return this.cache.rememberAggregate(key, collections, async () =>
      inner.aggregate(collection, Object.assign({}, query, { where: await this.knownIds(inner, query.where) })),
    );
  }

  override async get(collection: string, id: string, where?: Where): Promise<Doc | null> {
    if (this.touched || !hasThrough(where)) return this.inner.get(collection, id, where);
    const inner = this.innerNow();
    return inner.get(collection, id, await this.knownIds(inner, where));
  }

  /**
   * Rules through references with the ids they select, remembered until a collection they read
   * is written: a list under such a rule then costs what a list by ids costs. Inside a
   * transaction, and for more ids than MAX_IDS_PER_LIST, the store's subquery answers.
   */
  private knownIds(inner: Store, where: Where | undefined): Promise<Where | undefined> {
    if (this.touched || !hasThrough(where)) return Promise.resolve(where);
    return withKnownIds(where, (through, settledInner) => {
      const key = `ids\u0000${through.collection}\u0000${JSON.stringify(through.where ?? null)}`;
      const collections = [through.collection, ...throughCollections(through.where)];
      return this.cache.rememberIds(key, collections, async (limit) =>
        (
          await inner.find(through.collection, {
            where: settledInner,
            select: ['id'],
            limit,
            sort: [{ field: 'id', direction: 'asc' }],
          })
        ).map((doc) => doc.id),
      );
    });
  }

  /** Writes raise their collection's counts: at once, or inside a transaction when it ends. */
  protected override around<T>(call: StoreCall, collection: string | undefined, run: () => Promise<T>): Promise<T> {
    return collection !== undefined && WRITES.has(call) ? this.written(call, collection, run) : run();
  }

  protected wrapTransaction(tx: Store): Store {
    return new CountCachingStore(tx, this.cache, this.touched);
  }

  override async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.touched) return this.inner.transaction((tx) => fn(new CountCachingStore(tx, this.cache, this.touched)));
    const touched: Written = new Map();
    let committed = false;
    try {
      const result = await this.inner.transaction((tx) => fn(new CountCachingStore(tx, this.cache, touched)));
      committed = true;
      return result;
    } finally {
      // After the commit (or the rollback, which changed nothing: raising costs only a recount).
      for (const [collection, inserted] of touched) this.cache.endWrite(collection, committed ? inserted : undefined);
    }
  }

  /** Outside a transaction the write has committed when it returns; inside, the transaction raises it at its end. */
  private async written<T>(call: StoreCall, collection: string, write: () => Promise<T>): Promise<T> {
    if (this.touched) {
      if (!this.touched.has(collection)) {
        this.cache.beginWrite(collection);
        this.touched.set(collection, []);
      }
      const result = await write();
      this.touched.set(collection, withInserted(this.touched.get(collection), call, result));
      return result;
    }
    this.cache.beginWrite(collection);
    let inserted: Doc[] | undefined;
    try {
      const result = await write();
      inserted = withInserted([], call, result);
      return result;
    } finally {
      this.cache.endWrite(collection, inserted);
    }
  }
}

/**
 * `before` and the records an insert stored (as it answered them); undefined for any other write,
 * or past MAX_FOLDED_RECORDS.
 */
function withInserted(before: Doc[] | undefined, call: StoreCall, result: unknown): Doc[] | undefined {
  const added =
    call === 'insert' && typeof result === 'object' && result !== null
      ? [result as Doc]
      : call === 'insertMany' && Array.isArray(result)
        ? (result as Doc[])
        : undefined;
  return before && added && before.length + added.length <= MAX_FOLDED_RECORDS ? [...before, ...added] : undefined;
}
