import type Database from 'better-sqlite3';
import { activeContext, type Context, inGroupCommit, withContext } from '../../telemetry/tracing.js';
import type { GroupDeferred } from './textQueue.js';
import type { WalCheckpointer } from './walCheckpointer.js';

/** Transactions one commit carries at most, so readers waiting for it are not held long. */
export const MAX_GROUP = 32;
/**
 * Writes a group keeps for a replay at most (some 4 a create): a transaction that writes more (an
 * import) stops the keeping, and the group commits after it, so what is kept stays small.
 */
export const MAX_KEPT_WRITES = 4096;

interface Member {
  run(): Promise<unknown>;
  /** The trace the transaction belongs to (with tracing on): its work runs in it, not in the group's first. */
  trace?: Context;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** A statement that changed the database, and the values it was run with. */
interface Write {
  statement: Database.Statement;
  params: unknown[];
}

/**
 * Group commit on the one SQLite connection: transactions that arrive while others run share one
 * `BEGIN IMMEDIATE ... COMMIT`, and so one fsync under synchronous=FULL. A failure undoes its own
 * transaction only, and the others go on. No caller hears of its transaction before the group's
 * COMMIT has returned; if the COMMIT fails (or SQLite rolled the whole transaction back), every
 * member of the group fails with it.
 *
 * The members run one after another inside one savepoint of the group, not one each: SQLite
 * copies every page a savepoint changes to its statement journal the first time it changes it,
 * and each member of a group changes mostly the same pages (the ends of the same indexes), so a
 * savepoint per member copied each of them once per member, some 8% of a create's time. Instead
 * the group keeps the statements that wrote (`wrote`, told by the store after each one) with the
 * values they were run with. When a member fails, the group rolls back to its own savepoint and
 * runs again the writes of the members before it, on the same state they first ran on (the
 * group holds the write lock), which leaves what those members wrote and nothing of the one that
 * failed; the members after it then take a savepoint each, so one group replays at most once.
 *
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
  /** The writes of the running group's members, while they share the group's savepoint. */
  private writes: Write[] | undefined;
  /** A member wrote more than is kept: the group ends after it. */
  private overflowed = false;

  constructor(
    private readonly db: Database.Database,
    private readonly hold: (done: Promise<void> | undefined) => void,
    private readonly deferred: GroupDeferred[] = [],
    private readonly checkpointer?: Pick<WalCheckpointer, 'committed' | 'beforeTransaction'>,
  ) {}

  run<T>(fn: () => Promise<T>): Promise<T> {
    const trace = activeContext();
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        run: trace ? () => withContext(trace, fn) : fn,
        trace,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
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

  /** After a statement of the running member succeeded (the store tells every one it ran in a transaction). */
  wrote(statement: Database.Statement, params: unknown[]): void {
    if (!this.writes || statement.readonly) return;
    if (this.writes.length < MAX_KEPT_WRITES) this.writes.push({ statement, params });
    else {
      this.writes = undefined;
      this.overflowed = true;
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

  /** The group's COMMIT (its fsync), in a span of its first traced member's trace (tracing on). */
  private commit(members: Member[]): void {
    inGroupCommit('sqlite', members, () => this.exec('COMMIT'));
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
      this.exec('SAVEPOINT entigen_group');
    } catch (error) {
      // No transaction could start (the database is busy or gone): this group's first caller hears it.
      this.queue.shift()!.reject(error);
      if (db.open && db.inTransaction) this.exec('ROLLBACK');
      if (db.open) this.exec('PRAGMA temp_store = DEFAULT');
      this.hold(undefined);
      finish();
      return;
    }
    // Until a member fails, the members share the group's savepoint and their writes are kept.
    const writes: Write[] = [];
    this.writes = writes;
    this.overflowed = false;
    try {
      while (this.queue.length > 0 && done.length < MAX_GROUP && !this.overflowed) {
        const member = this.queue.shift()!;
        const own = this.writes === undefined;
        const from = writes.length;
        if (own) this.exec('SAVEPOINT entigen_member');
        for (const work of this.deferred) work.begin();
        try {
          const value = await member.run();
          if (own) this.exec('RELEASE entigen_member');
          for (const work of this.deferred) work.release();
          done.push({ member, value });
        } catch (error) {
          if (!db.inTransaction) {
            // SQLite ended the whole transaction (a full disk, an I/O error): nobody in it committed.
            member.reject(error);
            for (const earlier of done.splice(0)) earlier.member.reject(error);
            return;
          }
          if (own) {
            this.exec('ROLLBACK TO entigen_member');
            this.exec('RELEASE entigen_member');
          } else {
            // From here on each member takes a savepoint of its own, and nothing is kept.
            this.writes = undefined;
            this.overflowed = false;
            this.exec('ROLLBACK TO entigen_group');
            try {
              for (const { statement, params } of writes.slice(0, from)) {
                if (statement.reader) statement.all(...params);
                else statement.run(...params);
              }
            } catch (replayError) {
              // The same writes on the same state cannot fail but by a fault of the disk: none of the group stands.
              if (db.inTransaction) this.exec('ROLLBACK');
              member.reject(error);
              for (const earlier of done.splice(0)) earlier.member.reject(replayError);
              return;
            }
          }
          for (const work of this.deferred) work.rollback();
          member.reject(error);
        }
        // Callers whose transaction began while this one ran join the group.
        if (this.queue.length === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      this.writes = undefined;
      this.exec('RELEASE entigen_group');
      try {
        for (const work of this.deferred) work.flush();
        this.commit(done.map(({ member }) => member));
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
      this.writes = undefined;
      for (const work of this.deferred) work.clear();
      if (db.open && !db.inTransaction) this.exec('PRAGMA temp_store = DEFAULT');
      this.hold(undefined);
      finish();
    }
  }
}
