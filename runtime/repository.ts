import { newObjectId } from './model/objectId.js';
import type {
  AggregateResult,
  AggregateSort,
  Condition,
  Direction,
  Doc,
  GroupKey,
  Measure,
  Store,
  Where,
} from './store/types.js';

export interface RepositoryOptions {
  /** Owned entities get archivedAt: null on create. */
  owned: boolean;
  /** Array fields: a filter value matches when the array holds it. */
  arrayFields: readonly string[];
}

/**
 * How a repository writes when the runtime hands it out (to hooks, job handlers, migration
 * scripts, endpoints): through the entity's hooks, with history and the event log, in the
 * caller's transaction. Without one, a repository writes to the store directly.
 */
export interface RepositoryWriter {
  create(plural: string, data: Record<string, unknown>, system: Record<string, unknown>): Promise<Doc>;
  update(
    plural: string,
    id: string,
    data: Record<string, unknown>,
    system: Record<string, unknown>,
  ): Promise<Doc | null>;
  increment(
    plural: string,
    id: string,
    by: Record<string, number>,
    system: Record<string, unknown>,
  ): Promise<Doc | null>;
  remove(plural: string, id: string): Promise<boolean>;
}

/**
 * The list language's operators, for one field: `{ price: { gte: 10, lt: 50 } }`. `contains` and
 * `startsWith` ignore case and accents; `ne` and `nin` keep records without a value. On an array
 * field `eq` holds the value, `in` any of them, `nin` none of them.
 */
export interface FilterOps<T> {
  eq?: T | null;
  ne?: T | null;
  gt?: T;
  gte?: T;
  lt?: T;
  lte?: T;
  in?: T[];
  nin?: T[];
  exists?: boolean;
  contains?: string;
  startsWith?: string;
}

/** A filter on one field: a value (null: no value), a list of which any may match, or operators. */
export type FilterValue<T> = T | null | T[] | FilterOps<T>;

const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'contains', 'startsWith'] as const;

export interface FindOptions<TFilter, TSort extends string> {
  filter?: TFilter;
  /** Default: id descending; the id always breaks ties. */
  sort?: { field: TSort; direction: Direction }[];
  limit?: number;
  skip?: number;
  /** Records after this id in id order (a cursor: the last id of the previous page); needs id order. */
  after?: string;
}

/** One page and the cursor of the next (null after the last page). */
export interface Page<TRecord> {
  items: TRecord[];
  next: string | null;
}

export interface AggregateOptions<TFilter> {
  filter?: TFilter;
  /** At most three keys; dates may be bucketed (`{ field: 'createdAt', bucket: 'month' }`). */
  groupBy?: GroupKey[];
  measures?: Measure[];
  sort?: AggregateSort[];
  limit?: number;
  skip?: number;
  /** IANA name the date buckets are computed in (UTC). */
  timeZone?: string;
}

/**
 * Typed access to one collection for application code: hooks, job handlers, migration scripts.
 * It skips access control and request validation. Handed out by the runtime it writes through
 * the entity's hooks, history and event log (a RepositoryWriter); built over a bare store it
 * writes directly.
 */
export class Repository<TRecord, TCreate, TUpdate, TFilter extends object, TSort extends string> {
  constructor(
    protected readonly store: Store,
    readonly plural: string,
    private readonly options: RepositoryOptions,
    private readonly writer?: RepositoryWriter,
  ) {}

  async find(options: FindOptions<TFilter, TSort> = {}): Promise<TRecord[]> {
    if (options.after !== undefined && options.sort?.some((key) => key.field !== 'id')) {
      throw new Error(`${this.plural}: a cursor (after) follows id order; sort by id only, or page with skip`);
    }
    const docs = await this.store.find(this.plural, {
      where: this.where(options.filter),
      sort: options.sort,
      limit: options.limit,
      skip: options.skip,
      after: options.after,
    });
    return docs as TRecord[];
  }

  /** A page in id order (newest first unless `sort` says id ascending) and the cursor of the next. */
  async page(options: Omit<FindOptions<TFilter, TSort>, 'skip'> & { limit: number }): Promise<Page<TRecord>> {
    const items = await this.find({ ...options, limit: options.limit + 1 });
    const more = items.length > options.limit;
    if (more) items.pop();
    return { items, next: more ? (items.at(-1) as { id: string }).id : null };
  }

  count(filter?: TFilter): Promise<number> {
    return this.store.count(this.plural, { where: this.where(filter) });
  }

  /** Counts and measures by group, as GET /{plural}/aggregate answers them (without access checks). */
  aggregate(options: AggregateOptions<TFilter> = {}): Promise<AggregateResult> {
    return this.store.aggregate(this.plural, {
      where: this.where(options.filter),
      groupBy: options.groupBy ?? [],
      measures: options.measures ?? [],
      sort: options.sort ?? [],
      limit: options.limit ?? 100,
      skip: options.skip ?? 0,
      timeZone: options.timeZone ?? 'UTC',
    });
  }

  async get(id: string): Promise<TRecord | null> {
    return (await this.store.get(this.plural, id)) as TRecord | null;
  }

  /** Stores a record with a new id and timestamps; server-set fields such as ownerId go in `extra`. */
  async create(data: TCreate, extra: Record<string, unknown> = {}): Promise<TRecord> {
    const now = new Date().toISOString();
    const system: Record<string, unknown> = {
      ...extra,
      id: newObjectId(),
      createdAt: now,
      updatedAt: now,
    };
    if (this.options.owned && system.archivedAt === undefined) system.archivedAt = null;
    if (this.writer) return (await this.writer.create(this.plural, data as Record<string, unknown>, system)) as TRecord;
    return (await this.store.insert(this.plural, { ...(data as object), ...system } as Doc)) as TRecord;
  }

  async update(id: string, data: TUpdate): Promise<TRecord | null> {
    const system = { updatedAt: new Date().toISOString() };
    if (this.writer)
      return (await this.writer.update(this.plural, id, data as Record<string, unknown>, system)) as TRecord | null;
    return (await this.store.update(this.plural, id, { ...(data as object), ...system })) as TRecord | null;
  }

  async increment(id: string, by: Partial<Record<keyof TRecord & string, number>>): Promise<TRecord | null> {
    const system = { updatedAt: new Date().toISOString() };
    if (this.writer)
      return (await this.writer.increment(this.plural, id, by as Record<string, number>, system)) as TRecord | null;
    return (await this.store.increment(this.plural, id, by as Record<string, number>, system)) as TRecord | null;
  }

  remove(id: string): Promise<boolean> {
    if (this.writer) return this.writer.remove(this.plural, id);
    return this.store.remove(this.plural, id);
  }

  private where(filter: TFilter | undefined): Where | undefined {
    if (!filter) return undefined;
    const parts: Where[] = [];
    for (const [field, value] of Object.entries(filter)) {
      if (value === undefined) continue;
      const array = this.options.arrayFields.includes(field);
      if (isOperators(value)) parts.push(...this.operators(field, value, array));
      else if (array) {
        if (value === null) parts.push({ field, op: 'exists', value: false });
        else parts.push({ field, op: 'contains', value: Array.isArray(value) ? value : [value] });
      } else if (Array.isArray(value)) parts.push({ field, op: 'in', value });
      else parts.push({ field, op: 'eq', value });
    }
    return parts.length === 0 ? undefined : { and: parts };
  }

  private operators(field: string, ops: Record<string, unknown>, array: boolean): Where[] {
    const out: Where[] = [];
    for (const [op, value] of Object.entries(ops)) {
      if (value === undefined) continue;
      if (!(OPERATORS as readonly string[]).includes(op)) {
        throw new Error(`${this.plural}.${field}: unknown filter operator "${op}"; operators: ${OPERATORS.join(', ')}`);
      }
      if (array && op === 'eq') out.push({ field, op: 'contains', value: [value] });
      else if (array && op === 'in') out.push({ field, op: 'contains', value });
      else if (array && op === 'nin') out.push({ not: { field, op: 'contains', value } });
      else if (op === 'contains') out.push({ field, op: 'textContains', value });
      else if (op === 'startsWith') out.push({ field, op: 'textStartsWith', value });
      else out.push({ field, op: op as Condition['op'], value });
    }
    return out;
  }
}

/** `{ gt: 1 }` rather than a value: a plain object whose keys are all operator names. */
function isOperators(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && Object.getPrototypeOf(value) === Object.prototype;
}
