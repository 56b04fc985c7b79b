/** Work a group's members leave for the end of the group, before its COMMIT (groupCommit.ts). */
export interface GroupDeferred {
  /** A member starts, in its own savepoint. */
  begin(): void;
  /** Its savepoint was released: what it did stays in the group. */
  release(): void;
  /** Its savepoint was rolled back: what it did is gone. */
  rollback(): void;
  /** After the last member, outside every savepoint; a throw fails the whole group. */
  flush(): void;
  /** The group ended without a COMMIT. */
  clear(): void;
}

interface TextWrite {
  run(): void;
  /** The member that queued it. */
  member: number;
  /** The member inside whose savepoint it already ran (a search needed it), if any. */
  ranIn?: number;
}

/**
 * Writes to the FTS5 text index of a group's members, held until the group's last member is done.
 * SQLite tells FTS5 of every SAVEPOINT, and FTS5 answers by writing what it holds in memory as a
 * new segment: with each member in its own savepoint, a group of ten creates wrote ten segments,
 * and merging them cost more than the rows themselves. Queued here, the group's text goes in after
 * its members, outside their savepoints, as one segment. A search inside a member runs the queue
 * first (`runQueued`), so a transaction still finds what it wrote.
 */
export class TextQueue implements GroupDeferred {
  private writes: TextWrite[] = [];
  private member = 0;

  get pending(): boolean {
    return this.writes.some((write) => write.ranIn === undefined);
  }

  push(run: () => void): void {
    this.writes.push({ run, member: this.member });
  }

  /** Runs, inside the current member's savepoint, what is queued: a search is about to read it. */
  runQueued(): void {
    for (const write of this.writes) {
      if (write.ranIn !== undefined) continue;
      write.run();
      write.ranIn = this.member;
    }
  }

  begin(): void {
    this.member++;
  }

  release(): void {
    this.writes = this.writes.filter((write) => write.ranIn !== this.member);
  }

  rollback(): void {
    // The member's own writes went with its savepoint, and so did the earlier members' writes
    // that ran inside it: those are queued again.
    this.writes = this.writes.filter((write) => write.member !== this.member);
    for (const write of this.writes) if (write.ranIn === this.member) write.ranIn = undefined;
  }

  flush(): void {
    const writes = this.writes;
    this.writes = [];
    for (const write of writes) write.run();
  }

  clear(): void {
    this.writes = [];
  }
}
