import { ObjectId } from 'bson';
import type { Direction, Doc, Store, Where } from './store/types.js';

export interface RepositoryOptions {
  /** Owned entities get archivedAt: null on create. */
  owned: boolean;
  /** Array fields: a filter value matches when the array holds it. */
  arrayFields: readonly string[];
}

export interface FindOptions<TFilter, TSort extends string> {
  filter?: TFilter;
  sort?: { field: TSort; direction: Direction }[];
  limit?: number;
  skip?: number;
}

/**
 * Typed direct access to one collection for application code and job handlers. It skips
 * access control, validation and change history: use the HTTP API or the operations for those.
 */
export class Repository<TRecord, TCreate, TUpdate, TFilter extends object, TSort extends string> {
  constructor(
    protected readonly store: Store,
    readonly plural: string,
    private readonly options: RepositoryOptions,
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
    const doc: Doc = {
      ...(data as object),
      ...extra,
      id: new ObjectId().toHexString(),
      createdAt: now,
      updatedAt: now,
    };
    if (this.options.owned && doc.archivedAt === undefined) doc.archivedAt = null;
    return (await this.store.insert(this.plural, doc)) as TRecord;
  }

  async update(id: string, data: TUpdate): Promise<TRecord | null> {
    return (await this.store.update(this.plural, id, {
      ...(data as object),
      updatedAt: new Date().toISOString(),
    })) as TRecord | null;
  }

  async increment(id: string, by: Partial<Record<keyof TRecord & string, number>>): Promise<TRecord | null> {
    return (await this.store.increment(this.plural, id, by as Record<string, number>, {
      updatedAt: new Date().toISOString(),
    })) as TRecord | null;
  }

  remove(id: string): Promise<boolean> {
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
