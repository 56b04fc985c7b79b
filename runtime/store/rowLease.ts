import type { Doc, Store, UpdateSet, Where } from './types.js';

/** The lease was lost (it ran out, or another holder took it): what was about to be written is not. */
export class LeaseLost extends Error {
  constructor(id: string) {
    super(`the lease on ${id} was lost`);
  }
}

/**
 * A lease on one row (its `leaseOwner` and `leaseUntil` fields), taken and kept by conditional
 * updates, so across any number of instances one holds it at a time; a holder that dies loses it
 * when `leaseUntil` passes. The event log's consumers (afterCommit delivery, each webhook) keep
 * their cursors under one, and the scheduler claims each due run with one.
 *
 * Fencing: every write of a holder (`save`) and every action with effects outside the store
 * (`during`: a POST, a hook) is conditional on the lease being this holder's and not run out, and
 * the lease is renewed while the action runs, so no other instance takes it meanwhile unless this
 * one stops renewing (it died or stalled). A holder whose lease was lost stops at its next step.
 */
export class RowLease {
  /** Rows this holder took and has not let go (released at shutdown), with when its lease on each ends. */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly collection: string,
    readonly owner: string,
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
    if (row.leaseOwner === this.owner && typeof row.leaseUntil === 'string' && row.leaseUntil > halfway) {
      this.held.set(id, Date.parse(row.leaseUntil));
      return row;
    }
    const taken = await this.store.update(
      this.collection,
      id,
      { leaseOwner: this.owner, leaseUntil: this.until(this.leaseMs) },
      {
        or: [
          { field: 'leaseOwner', op: 'eq', value: this.owner },
          { field: 'leaseUntil', op: 'exists', value: false },
          { field: 'leaseUntil', op: 'lt', value: now.toISOString() },
        ],
      },
    );
    this.track(id, taken, this.leaseMs);
    return taken;
  }

  /**
   * Takes row `id` for `forMs` when `where` holds (a compare-and-set on what the caller read),
   * writing `set` with it; the row, or null when `where` no longer holds.
   */
  async claim(id: string, forMs: number, where: Where, set: UpdateSet = {}): Promise<Doc | null> {
    const claimed = await this.store.update(
      this.collection,
      id,
      { ...set, leaseOwner: this.owner, leaseUntil: this.until(forMs) },
      where,
    );
    this.track(id, claimed, forMs);
    return claimed;
  }

  /**
   * Runs an action with effects outside the store (a POST, a hook) under the lease: renewed first,
   * only while this holder still has it (LeaseLost otherwise: the action does not happen), then
   * renewed every third of the lease while the action runs. A holder that dies stops renewing, so
   * another instance goes on one lease after; one that loses the lease meanwhile has its next
   * `save` refused.
   */
  async during<T>(id: string, action: () => Promise<T>): Promise<T> {
    // A lease saved moments ago (the write after the previous action) needs no write before this one.
    const left = (this.held.get(id) ?? 0) - this.now().getTime();
    if (left < (this.leaseMs * 2) / 3 && !(await this.save(id, {}))) throw new LeaseLost(id);
    const renew = setInterval(() => void this.save(id, {}).catch(() => undefined), Math.max(10, this.leaseMs / 3));
    renew.unref();
    try {
      return await action();
    } finally {
      clearInterval(renew);
    }
  }

  /** Writes `set` (and renews the lease) only while this holder still has it; false when it was lost. */
  async save(id: string, set: UpdateSet, store: Store = this.store): Promise<boolean> {
    const saved = await store.update(
      this.collection,
      id,
      { ...set, leaseUntil: this.until(this.leaseMs) },
      this.mine(),
    );
    // Inside a caller's transaction the write may still roll back: only a loss is certain.
    if (store === this.store || !saved) this.track(id, saved, this.leaseMs);
    return saved !== null;
  }

  /** As `save`, inside the caller's transaction: throws LeaseLost (rolling it back) when the lease was lost. */
  async saveOrThrow(id: string, set: UpdateSet, tx: Store): Promise<void> {
    if (!(await this.save(id, set, tx))) throw new LeaseLost(id);
  }

  /** Lets the row go at once (and writes `set`), so another instance need not wait for the lease to run out. */
  async release(id: string, set: UpdateSet = {}): Promise<void> {
    this.held.delete(id);
    await this.store.update(
      this.collection,
      id,
      { ...set, leaseOwner: null, leaseUntil: null },
      { field: 'leaseOwner', op: 'eq', value: this.owner },
    );
  }

  /** Lets every row this holder took go (shutdown). */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.held.keys()].map((id) => this.release(id).catch(() => undefined)));
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

  /** After a conditional write: held for `ms` from now, or not held at all. */
  private track(id: string, row: Doc | null, ms: number): void {
    if (row) this.held.set(id, this.now().getTime() + ms);
    else this.held.delete(id);
  }

  /** Held by this holder and not run out. */
  private mine(): Where {
    return {
      and: [
        { field: 'leaseOwner', op: 'eq', value: this.owner },
        { field: 'leaseUntil', op: 'gt', value: this.now().toISOString() },
      ],
    };
  }

  private until(ms: number): string {
    return new Date(this.now().getTime() + ms).toISOString();
  }
}
