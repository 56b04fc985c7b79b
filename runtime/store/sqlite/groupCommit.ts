import type Database from 'better-sqlite3';
import type { GroupDeferred } from './textQueue.js';
import type { WalCheckpointer } from './walCheckpointer.js';

/** Transactions one commit carries at most, so readers waiting for it are not held long. */
export const MAX_GROUP = 32;

interface Member {
  run(): Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit on the one SQLite connection: transactions that arrive while others run share one
 * `BEGIN IMMEDIATE ... COMMIT`, and so one fsync under synchronous=FULL. Each runs in its own
 * savepoint, one after another: a failure rolls back to its savepoint only, and the others go
 * on. No caller hears of its transaction before the group's COMMIT has returned; if the COMMIT
 * fails (or SQLite rolled the whole transaction back), every member of the group fails with it.
 * `hold` is called with a promise that settles when the group ends, for readers to wait on;
 * `deferred` holds work the members leave for after the last of them (the text index, textQueue.ts;
 * the event numbers, groupNumbering.ts).
 */
export class GroupCommit {
  private readonly queue: Member[] = [];
  private running = false;
  /** Groups committed and the transactions they carried, for the operator metrics and tests. */
  groups = 0;
  members = 0;
  /** The group's own statements, prepared once: `db.exec` would prepare each anew, some 20 a group. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly hold: (done: Promise<void> | undefined) => void,
    private readonly deferred: GroupDeferred[] = [],
    private readonly checkpointer?: Pick<WalCheckpointer, 'committed' | 'beforeTransaction'>,
  ) {}

  run<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        await this.group();
        // Readers waiting for the group run before the next one starts.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.running = false;
    }
  }

  private exec(sql: string): void {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    statement.run();
  }

  private async group(): Promise<void> {
    const { db } = this;
    let finish!: () => void;
    this.hold(new Promise<void>((resolve) => (finish = resolve)));
    const done: { member: Member; value: unknown }[] = [];
    try {
      this.checkpointer?.beforeTransaction();
      // The savepoints keep the pages they touch in the statement journal: in memory during the
      // group (its size is bounded by MAX_GROUP members), back to files for the reads in between,
      // whose sorts could be as large as a table. It cannot change inside a transaction.
      this.exec('PRAGMA temp_store = MEMORY');
      this.exec('BEGIN IMMEDIATE');
    } catch (error) {
      // No transaction could start (the database is busy or gone): this group's first caller hears it.
      this.queue.shift()!.reject(error);
      if (db.open) this.exec('PRAGMA temp_store = DEFAULT');
      this.hold(undefined);
      finish();
      return;
    }
    try {
      while (this.queue.length > 0 && done.length < MAX_GROUP) {
        const member = this.queue.shift()!;
        this.exec('SAVEPOINT entigen_member');
        for (const work of this.deferred) work.begin();
        try {
          const value = await member.run();
          this.exec('RELEASE entigen_member');
          for (const work of this.deferred) work.release();
          done.push({ member, value });
        } catch (error) {
          if (!db.inTransaction) {
            // SQLite ended the whole transaction (a full disk, an I/O error): nobody in it committed.
            member.reject(error);
            for (const earlier of done.splice(0)) earlier.member.reject(error);
            return;
          }
          this.exec('ROLLBACK TO entigen_member');
          this.exec('RELEASE entigen_member');
          for (const work of this.deferred) work.rollback();
          member.reject(error);
        }
        // Callers whose transaction began while this one ran join the group.
        if (this.queue.length === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      try {
        for (const work of this.deferred) work.flush();
        this.exec('COMMIT');
      } catch (error) {
        if (db.inTransaction) this.exec('ROLLBACK');
        for (const { member } of done) member.reject(error);
        return;
      }
      this.checkpointer?.committed();
      this.groups++;
      this.members += done.length;
      for (const { member, value } of done) member.resolve(value);
    } finally {
      for (const work of this.deferred) work.clear();
      if (db.open && !db.inTransaction) this.exec('PRAGMA temp_store = DEFAULT');
      this.hold(undefined);
      finish();
    }
  }
}
