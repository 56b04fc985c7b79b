import { ObjectId } from 'bson';
import type { Direction, Doc, Store, Where } from './store/types.js';

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

export interface FindOptions<TFilter, TSort extends string> {
  filter?: TFilter;
  sort?: { field: TSort; direction: Direction }[];
  limit?: number;
  skip?: number;
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
    const docs = await this.store.find(this.plural, {
      where: this.where(options.filter),
      sort: options.sort,
      limit: options.limit,
      skip: options.skip,
    });
    return docs as TRecord[];
  }

  count(filter?: TFilter): Promise<number> {
    return this.store.count(this.plural, { where: this.where(filter) });
  }

  async get(id: string): Promise<TRecord | null> {
    return (await this.store.get(this.plural, id)) as TRecord | null;
  }

  /** Stores a record with a new id and timestamps; server-set fields such as ownerId go in `extra`. */
  async create(data: TCreate, extra: Record<string, unknown> = {}): Promise<TRecord> {
    const now = new Date().toISOString();
    const system: Record<string, unknown> = {
      ...extra,
      id: new ObjectId().toHexString(),
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
      if (this.options.arrayFields.includes(field))
        parts.push({ field, op: 'contains', value: Array.isArray(value) ? value : [value] });
      else if (Array.isArray(value)) parts.push({ field, op: 'in', value });
      else parts.push({ field, op: 'eq', value });
    }
    return parts.length === 0 ? undefined : { and: parts };
  }
}
