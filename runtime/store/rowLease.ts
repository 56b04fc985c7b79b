import type { Doc, Store, UpdateSet, Where } from './types.js';

/**
 * A lease on one row (its `leaseOwner` and `leaseUntil` fields), taken and kept by conditional
 * updates, so across any number of instances one holds it at a time; a holder that dies loses it
 * when `leaseUntil` passes. The event log's consumers (afterCommit delivery, each webhook) keep
 * their cursors under one.
 */
export class RowLease {
  constructor(
    private readonly store: Store,
    private readonly collection: string,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly now: () => Date,
  ) {}

  /**
   * Takes or renews the lease on row `id`; the row, or null when another holder has it. A lease
   * held with more than half its time left is kept without a write.
   */
  async take(id: string): Promise<Doc | null> {
    const now = this.now();
    const row = await this.store.get(this.collection, id);
    if (!row) return null;
    const halfway = new Date(now.getTime() + this.leaseMs / 2).toISOString();
    if (row.leaseOwner === this.owner && typeof row.leaseUntil === 'string' && row.leaseUntil > halfway) return row;
    return this.store.update(
      this.collection,
      id,
      { leaseOwner: this.owner, leaseUntil: this.until() },
      {
        or: [
          { field: 'leaseOwner', op: 'eq', value: this.owner },
          { field: 'leaseUntil', op: 'exists', value: false },
          { field: 'leaseUntil', op: 'lt', value: now.toISOString() },
        ],
      },
    );
  }

  /** Writes `set` (and renews the lease) only while this holder still has it; false when it was lost. */
  async save(id: string, set: UpdateSet): Promise<boolean> {
    const saved = await this.store.update(
      this.collection,
      id,
      { ...set, leaseUntil: this.until() },
      { field: 'leaseOwner', op: 'eq', value: this.owner },
    );
    return saved !== null;
  }

  /** Lets the row go at once (shutdown), so another instance need not wait for the lease to run out. */
  async release(id: string): Promise<void> {
    await this.store.update(
      this.collection,
      id,
      { leaseOwner: null, leaseUntil: null },
      { field: 'leaseOwner', op: 'eq', value: this.owner },
    );
  }

  /** Writes `set` when nobody holds the row (or the lease ran out). */
  async whenFree(id: string, set: UpdateSet): Promise<Doc | null> {
    const free: Where = {
      or: [
        { field: 'leaseUntil', op: 'exists', value: false },
        { field: 'leaseUntil', op: 'lt', value: this.now().toISOString() },
      ],
    };
    return this.store.update(this.collection, id, set, free);
  }

  private until(): string {
    return new Date(this.now().getTime() + this.leaseMs).toISOString();
  }
}
