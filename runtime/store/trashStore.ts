import type { AppModel } from '../model/types.js';
import { StoreWrapper } from './storeWrapper.js';
import type {
  AggregateQuery,
  AggregateResult,
  CountQuery,
  Doc,
  FindQuery,
  FindResult,
  IncrementInput,
  Store,
  UpdateSet,
  Where,
} from './types.js';

/** Records of a trash entity that are in its trash. */
export const TRASHED: Where = { field: 'trashedAt', op: 'exists', value: true };
/** Records of a trash entity that are not. */
export const NOT_TRASHED: Where = { field: 'trashedAt', op: 'exists', value: false };

/**
 * The store every operation, hook and job goes through: the records of an entity that keeps a
 * trash are out of sight while they are in it, for every read and every conditional write (get,
 * find, count, aggregate, update, increment, remove). So no path shows, references, counts or
 * changes a trashed record by accident: to the rest of the server it is deleted. The trash's own
 * operations take `seeingTrash(store)`, which sees both.
 */
export class TrashStore extends StoreWrapper {
  constructor(
    inner: Store,
    private readonly kept: ReadonlySet<string>,
    private readonly hiding = true,
  ) {
    super(inner);
  }

  /** The same store, trashed records in sight. */
  seeing(): TrashStore {
    return this.hiding ? new TrashStore(this.inner, this.kept, false) : this;
  }

  private scoped(collection: string, where: Where | undefined): Where | undefined {
    if (!this.hiding || !this.kept.has(collection)) return where;
    return where ? { and: [where, NOT_TRASHED] } : NOT_TRASHED;
  }

  override find(collection: string, query: FindQuery): Promise<FindResult> {
    return super.find(
      collection,
      this.kept.has(collection) ? Object.assign({}, query, { where: this.scoped(collection, query.where) }) : query,
    );
  }
  override count(collection: string, query: CountQuery): Promise<number> {
    return super.count(
      collection,
      this.kept.has(collection) ? Object.assign({}, query, { where: this.scoped(collection, query.where) }) : query,
    );
  }
  override aggregate(collection: string, query: AggregateQuery): Promise<AggregateResult> {
    return super.aggregate(
      collection,
      this.kept.has(collection) ? Object.assign({}, query, { where: this.scoped(collection, query.where) }) : query,
    );
  }
  override get(collection: string, id: string, where?: Where): Promise<Doc | null> {
    return super.get(collection, id, this.scoped(collection, where));
  }
  override update(collection: string, id: string, set: UpdateSet, where?: Where): Promise<Doc | null> {
    return super.update(collection, id, set, this.scoped(collection, where));
  }
  override increment(
    collection: string,
    id: string,
    by: IncrementInput,
    set?: UpdateSet,
    where?: Where,
  ): Promise<Doc | null> {
    return super.increment(collection, id, by, set, this.scoped(collection, where));
  }
  override remove(collection: string, id: string, where?: Where): Promise<boolean> {
    return super.remove(collection, id, this.scoped(collection, where));
  }

  protected wrapTransaction(tx: Store): Store {
    return new TrashStore(tx, this.kept, this.hiding);
  }
}

/** `store` around the model's trash entities, or `store` itself when none keeps a trash. */
export function withTrash(store: Store, model: AppModel): Store {
  const kept = new Set(model.entities.filter((e) => e.trash).map((e) => e.plural));
  return kept.size > 0 ? new TrashStore(store, kept) : store;
}

/** The view of `store` that sees trashed records too (the store itself where nothing is hidden). */
export function seeingTrash(store: Store): Store {
  return store instanceof TrashStore ? store.seeing() : store;
}
