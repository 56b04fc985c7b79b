import type { NumberingCounter } from '../types.js';
import type { GroupDeferred } from './textQueue.js';

/** How the numbering reads and writes a counter row, inside the group's transaction. */
export interface CounterRow {
  read(counter: NumberingCounter): number;
  write(counter: NumberingCounter, value: number): void;
}

interface Taken {
  counter: NumberingCounter;
  /** The value the row holds. */
  stored: number;
  /** The last number taken. */
  next: number;
  /** The member that took numbers last, and where it started. */
  member: number;
  memberStart: number;
}

/**
 * Numbers for the rows a group's members insert with `insertNumbered` (the event log's seq),
 * taken from the counter row once per group rather than by one UPDATE ... RETURNING per member:
 * the group holds the write lock from its BEGIN IMMEDIATE, so no other connection takes a number
 * meanwhile. A member rolled back gives its numbers back, so the next member takes them and no
 * gap is ever committed; the row is written once, after the last member.
 */
export class GroupNumbering implements GroupDeferred {
  private readonly counters = new Map<string, Taken>();
  private member = 0;

  constructor(private readonly row: CounterRow) {}

  /** `count` consecutive numbers of `counter`; the first is returned. */
  take(counter: NumberingCounter, count: number): number {
    const key = keyOf(counter.collection, counter.id);
    let taken = this.counters.get(key);
    if (!taken) {
      const stored = this.row.read(counter);
      taken = { counter, stored, next: stored, member: this.member, memberStart: stored };
      this.counters.set(key, taken);
    }
    if (taken.member !== this.member) {
      taken.member = this.member;
      taken.memberStart = taken.next;
    }
    const first = taken.next + 1;
    taken.next += count;
    return first;
  }

  /**
   * Refuses a read or write of the row `id` of `collection` while the group holds numbers of it
   * that the row does not show yet: nothing reads the counter inside a numbering transaction.
   */
  untouched(collection: string, id: string): void {
    if (this.counters.size > 0 && this.counters.has(keyOf(collection, id)))
      throw new Error(`${collection} ${id} numbers this transaction's rows: read or change it after the commit`);
  }

  begin(): void {
    this.member++;
  }

  release(): void {}

  rollback(): void {
    for (const taken of this.counters.values()) if (taken.member === this.member) taken.next = taken.memberStart;
  }

  flush(): void {
    for (const taken of this.counters.values())
      if (taken.next !== taken.stored) this.row.write(taken.counter, taken.next);
    this.counters.clear();
  }

  clear(): void {
    this.counters.clear();
  }
}

const keyOf = (collection: string, id: string) => `${collection}\u0000${id}`;
