import {
  type ChangeStream,
  type ClientSession,
  type Collection,
  type Db,
  type Document,
  MongoClient,
  MongoError,
  MongoServerError,
} from 'mongodb';
import { physicalModel } from '../../model/locales.js';
import type { AppModel } from '../../model/types.js';
import { aggregateValues } from '../common/aggregateValues.js';
import { indexesFor } from '../common/indexPlan.js';
import { foldText } from '../common/sortKey.js';
import { type TableLayout, tableLayout } from '../common/tableLayout.js';
import { settleThroughByIds } from '../common/throughIds.js';
import type {
  AggregateGroup,
  AggregateQuery,
  AggregateResult,
  CountQuery,
  Doc,
  FindQuery,
  IncrementInput,
  SchemaChanges,
  Store,
  UpdateSet,
  Where,
} from '../types.js';
import { StoreUnavailable, UniqueConflict } from '../types.js';
import { fromMongoDoc, type MongoDoc, mongoLayout, searchWords, toMongoDoc, toMongoUpdate } from './mongoDocument.js';
import {
  type MongoFilter,
  SEARCH_FIELD,
  toMongoAggregate,
  toMongoCollation,
  toMongoFilter,
  toMongoSort,
  toMongoTextFilter,
} from './translate.js';

const DUPLICATE_KEY = 11000;
const SEARCH_INDEX = 'ix_search_words';
const NAMESPACE_EXISTS = 48;
/** Driver errors that mean the server cannot be reached, by class name. */
const UNAVAILABLE = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoClientClosedError',
  'MongoServerClosedError',
]);

interface Shared {
  client: MongoClient;
  db: Db;
  layouts: Map<string, TableLayout>;
}

/**
 * MongoDB through the official driver: native collations for explicit sorts, `$inc` for
 * increments, unique and filter indexes from the model, transactions on client sessions (which
 * need a replica set or sharded cluster), every write acknowledged by a journaled majority.
 */
export class MongoStore implements Store {
  readonly kind = 'mongo';

  /** `mongodb://host/DB`: the database named in the path, `entigen` when none is. */
  static open(url: string, options: { database?: string; maxPoolSize?: number } = {}): MongoStore {
    const client = new MongoClient(url, {
      writeConcern: { w: 'majority', journal: true },
      maxPoolSize: options.maxPoolSize ?? 10,
      serverSelectionTimeoutMS: 5000,
      connectTimeoutMS: 5000,
    });
    const database = options.database ?? (decodeURIComponent(new URL(url).pathname.slice(1)) || 'entigen');
    return MongoStore.withClient(client, database);
  }

  /** Over a client made elsewhere (tests hand in a stand-in). */
  static withClient(client: MongoClient, database: string): MongoStore {
    return new MongoStore({ client, db: client.db(database), layouts: new Map() }, undefined);
  }

  private constructor(
    private readonly shared: Shared,
    private readonly session: ClientSession | undefined,
  ) {}

  async init(declared: AppModel): Promise<SchemaChanges> {
    // Localized fields are laid out a column per locale, whoever opened the store.
    const model = physicalModel(declared);
    const changes: SchemaChanges = { added: [], dropped: [] };
    await guard(async () => {
      for (const entity of model.entities) {
        const layout = tableLayout(entity);
        this.shared.layouts.set(entity.plural, layout);
        layout.siblings = this.shared.layouts;
        await this.shared.db.createCollection(layout.table).catch((error: unknown) => {
          if ((error as MongoServerError).code !== NAMESPACE_EXISTS) throw error;
        });
        const collection = this.shared.db.collection(layout.table);
        const indexKeys = new Map(
          (await collection.listIndexes().toArray()).map((index) => [String(index.name), Object.keys(index.key ?? {})]),
        );
        for (const field of layout.unique) {
          // Per tenant where the entity is tenant-scoped (a missing tenant is one tenant of its own).
          const keys = [...(layout.uniqueWithin ? [layout.uniqueWithin] : []), field];
          const name = `ux_${field}`;
          const current = indexKeys.get(name);
          if (current && current.join() !== keys.join()) await collection.dropIndex(name);
          // Absent values are not indexed, so many records may leave a unique field unset (as NULLs in SQL).
          await collection.createIndex(Object.fromEntries(keys.map((key) => [key, 1])), {
            name,
            unique: true,
            partialFilterExpression: { [field]: { $exists: true } },
          });
        }
        const existing = (await collection.listIndexes().toArray()).map((index) => String(index.name));
        const indexes = indexesFor(layout.indexes, 'mongo');
        for (const index of indexes) {
          if (existing.includes(index.name)) continue;
          // Arrays are multikey indexes; every key ascending (MongoDB walks them either way). Not being
          // archived is an equality on a missing field here: it leads the keys instead of a partial filter.
          const columns = index.live ? ['archivedAt', ...index.columns] : index.columns;
          const keys = Object.fromEntries(columns.map((column) => [column === 'id' ? '_id' : column, 1]));
          await collection.createIndex(keys, { name: index.name });
          changes.added.push(index.name);
        }
        const planned = new Set(indexes.map((index) => index.name));
        for (const name of existing) {
          // ix_: planned now, or one index per filter under the earlier plan.
          if (!name.startsWith('ix_') || name === SEARCH_INDEX || planned.has(name)) continue;
          await collection.dropIndex(name);
          changes.dropped.push(name);
        }
        if (layout.searchFields.length > 0) await collection.createIndex({ [SEARCH_FIELD]: 1 }, { name: SEARCH_INDEX });
        // A field that became a filter: its stored values get their folded text (contains, startsWith).
        for (const column of layout.columns.values()) {
          if (!column.fold) continue;
          // A batch at a time: each updated document leaves the filter.
          for (;;) {
            const missing = await collection
              .find(
                { [column.field]: { $type: 'string' }, [column.fold]: { $exists: false } },
                { projection: { [column.field]: 1 }, limit: 500 },
              )
              .toArray();
            for (const doc of missing)
              await collection.updateOne(
                { _id: doc._id },
                { $set: { [column.fold]: foldText(doc[column.field] as string) } },
              );
            if (missing.length < 500) break;
          }
        }
      }
    });
    return changes;
  }

  async find(collection: string, found: FindQuery): Promise<Doc[]> {
    const layout = this.layout(collection);
    const query = { ...found, where: await this.settle(layout, found.where) };
    const filter = this.filter(
      layout,
      query,
      query.after === undefined ? undefined : { _id: { [idDirection(query) === 'asc' ? '$gt' : '$lt']: query.after } },
    );
    const projection = query.select
      ? Object.fromEntries(query.select.filter((f) => layout.columns.has(f) && f !== 'id').map((f) => [f, 1]))
      : undefined;
    return guard(async () => {
      const cursor = this.collection(layout).find(filter, {
        session: this.session,
        sort: toMongoSort(query, mongoLayout(layout)),
        collation: toMongoCollation(query.collation),
        projection,
        skip: query.skip || undefined,
        limit: query.limit,
      });
      const stored = await cursor.toArray();
      return stored.map((doc) =>
        fromMongoDoc(layout, doc, query.select ? ['id', ...query.select.filter((f) => f !== 'id')] : undefined),
      );
    });
  }

  async count(collection: string, counted: CountQuery): Promise<number> {
    const layout = this.layout(collection);
    const query = { ...counted, where: await this.settle(layout, counted.where) };
    return guard(() => this.collection(layout).countDocuments(this.filter(layout, query), { session: this.session }));
  }

  async aggregate(collection: string, asked: AggregateQuery): Promise<AggregateResult> {
    const layout = this.layout(collection);
    const query = { ...asked, where: await this.settle(layout, asked.where) };
    const pipeline = toMongoAggregate(query, this.filter(layout, query));
    const [answer] = await guard(() =>
      this.collection(layout).aggregate(pipeline, { session: this.session, allowDiskUse: true }).toArray(),
    );
    const rows = (answer?.page ?? []) as Document[];
    const totalGroups = Number((answer?.total as Document[] | undefined)?.[0]?.n ?? 0);
    // Without keys there is always one group, as SQL's aggregate of no rows gives one.
    if (query.groupBy.length === 0 && totalGroups === 0) {
      if (query.skip > 0) return { groups: [], totalGroups: 1 };
      rows.push({
        _id: null,
        c: 0,
        ...Object.fromEntries(query.measures.map((m, i) => [`m${i}`, m.op === 'sum' ? 0 : null])),
      });
      return { groups: rows.map((row) => aggregateGroup(layout, query, row)), totalGroups: 1 };
    }
    return { groups: rows.map((row) => aggregateGroup(layout, query, row)), totalGroups };
  }

  async get(collection: string, id: string, constraint?: Where): Promise<Doc | null> {
    const layout = this.layout(collection);
    const where = await this.settle(layout, constraint);
    const stored = await guard(() =>
      this.collection(layout).findOne(withId(id, where, layout), { session: this.session }),
    );
    return stored ? fromMongoDoc(layout, stored) : null;
  }

  async insert(collection: string, doc: Doc): Promise<Doc> {
    const layout = this.layout(collection);
    await this.write(layout, () =>
      this.collection(layout).insertOne(toMongoDoc(layout, doc), { session: this.session }),
    );
    return fromMongoDoc(layout, toMongoDoc(layout, doc));
  }

  async insertMany(collection: string, docs: Doc[]): Promise<Doc[]> {
    const layout = this.layout(collection);
    const stored = docs.map((doc) => toMongoDoc(layout, doc));
    if (stored.length === 0) return [];
    await this.transaction(async (tx) => {
      const session = (tx as MongoStore).session;
      await this.write(layout, () => this.collection(layout).insertMany(stored, { session, ordered: true }));
    });
    return stored.map((doc) => fromMongoDoc(layout, doc));
  }

  async update(collection: string, id: string, set: UpdateSet, constraint?: Where): Promise<Doc | null> {
    const layout = this.layout(collection);
    const where = await this.settle(layout, constraint);
    const update = toMongoUpdate(layout, set);
    if (Object.keys(update).length === 0) return this.get(collection, id, where);
    const searchChanged = layout.searchFields.some((f) => f in set);
    const apply = async (session: ClientSession | undefined) => {
      const after = await this.write(layout, () =>
        this.collection(layout).findOneAndUpdate(withId(id, where, layout), update, {
          session,
          returnDocument: 'after',
        }),
      );
      if (after && searchChanged) {
        await this.collection(layout).updateOne(
          { _id: id },
          { $set: { [SEARCH_FIELD]: searchWords(layout, fromMongoDoc(layout, after)) } },
          { session },
        );
      }
      return after ? fromMongoDoc(layout, after) : null;
    };
    // The record and its search words change together.
    return searchChanged && !this.session
      ? this.transaction((tx) => apply((tx as MongoStore).session))
      : apply(this.session);
  }

  async increment(
    collection: string,
    id: string,
    by: IncrementInput,
    set: UpdateSet = {},
    constraint?: Where,
  ): Promise<Doc | null> {
    const layout = this.layout(collection);
    const where = await this.settle(layout, constraint);
    const after = await this.write(layout, () =>
      this.collection(layout).findOneAndUpdate(withId(id, where, layout), toMongoUpdate(layout, set, by), {
        session: this.session,
        returnDocument: 'after',
      }),
    );
    return after ? fromMongoDoc(layout, after) : null;
  }

  async remove(collection: string, id: string, constraint?: Where): Promise<boolean> {
    const layout = this.layout(collection);
    const where = await this.settle(layout, constraint);
    const { deletedCount } = await guard(() =>
      this.collection(layout).deleteOne(withId(id, where, layout), { session: this.session }),
    );
    return deletedCount > 0;
  }

  /** A session transaction; the driver retries it on transient errors (write conflicts, elections). */
  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.session) return fn(this);
    const session = this.shared.client.startSession();
    try {
      let result: T | undefined;
      await guard(() =>
        session.withTransaction(async () => {
          result = await fn(new MongoStore(this.shared, session));
        }),
      );
      return result as T;
    } finally {
      await session.endSession().catch(() => undefined);
    }
  }

  async ping(): Promise<void> {
    await guard(() => this.shared.db.command({ ping: 1 }));
  }

  /**
   * Whether the deployment has change streams (a replica set or a sharded cluster; a standalone
   * server refuses them): only then can a server hear every other writer of the database.
   */
  async hasChangeStreams(): Promise<boolean> {
    const stream = this.shared.db.watch([], { maxAwaitTimeMS: 1 });
    try {
      await stream.tryNext();
      return true;
    } catch {
      return false;
    } finally {
      await stream.close().catch(() => undefined);
    }
  }

  /**
   * The database's changes, whoever makes them: each names its collection (ns.coll, the entity's
   * plural). Every answer of the server, a change or none within `maxAwaitTimeMS`, moves the
   * stream's resume token (`resumeTokenChanged`), which proves every change before it arrived.
   */
  watchChanges(maxAwaitTimeMS: number): ChangeStream {
    return this.shared.db.watch([{ $project: { ns: 1, operationType: 1 } }], { maxAwaitTimeMS });
  }

  async close(): Promise<void> {
    await this.shared.client.close().catch(() => undefined);
  }

  private collection(layout: TableLayout): Collection<MongoDoc> {
    return this.shared.db.collection<MongoDoc>(layout.table);
  }

  private layout(collection: string): TableLayout {
    const layout = this.shared.layouts.get(collection);
    if (!layout) throw new Error(`unknown collection ${collection}`);
    return layout;
  }

  /** `through` conditions as the ids they reach: MongoDB cannot join in a find. */
  private settle(layout: TableLayout, where: Where | undefined): Promise<Where | undefined> {
    return settleThroughByIds(where, layout, async (collection, inner, limit) =>
      (
        await this.find(collection, { where: inner, select: ['id'], limit, sort: [{ field: 'id', direction: 'asc' }] })
      ).map((doc) => doc.id),
    );
  }

  private filter(layout: TableLayout, query: CountQuery, extra?: MongoFilter): MongoFilter {
    const parts = [
      toMongoFilter(query.where, mongoLayout(layout)),
      toMongoTextFilter(query.text, mongoLayout(layout)),
      extra,
    ].filter((part): part is MongoFilter => part !== undefined && Object.keys(part).length > 0);
    return parts.length === 0 ? {} : parts.length === 1 ? parts[0] : { $and: parts };
  }

  /** A write whose duplicate-key error becomes a UniqueConflict naming the field. */
  private async write<T>(layout: TableLayout, run: () => Promise<T>): Promise<T> {
    try {
      return await guard(run);
    } catch (error) {
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) {
        // The field is the last key: a unique index held per tenant leads with the tenant.
        const field = Object.keys((error.keyPattern as Document | undefined) ?? {}).at(-1) ?? 'id';
        throw new UniqueConflict(layout.table, field === '_id' ? 'id' : field);
      }
      throw error;
    }
  }
}

function aggregateGroup(layout: TableLayout, query: AggregateQuery, row: Document): AggregateGroup {
  const key = Object.fromEntries(query.groupBy.map((k, i) => [k.field, row._id?.[`g${i}`] ?? null]));
  const values = aggregateValues(layout, query.measures, (i) => row[`m${i}`]);
  return { key, count: Number(row.c), values };
}

function withId(id: string, where: Where | undefined, layout: TableLayout): MongoFilter {
  const condition = toMongoFilter(where, mongoLayout(layout));
  return Object.keys(condition).length === 0 ? { _id: id } : { $and: [{ _id: id }, condition] };
}

function idDirection(query: FindQuery): 'asc' | 'desc' {
  return query.sort?.find((s) => s.field === 'id')?.direction ?? 'desc';
}

/** Runs a driver call; connection failures become StoreUnavailable (503). */
async function guard<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof MongoError && (UNAVAILABLE.has(error.name) || error.hasErrorLabel('ResetPool'))) {
      throw new StoreUnavailable(`MongoDB is unavailable: ${error.message}`);
    }
    throw error;
  }
}
