import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { CHECKPOINT_WORKER_SOURCE } from './checkpointWorkerSource.js';

/** How long commits gather before the thread copies them into the database file. */
const CHECKPOINT_INTERVAL_MS = 200;
/**
 * WAL frames after which the writer checkpoints once itself (16,000 frames: 64 MB at 4 KB pages).
 * The thread copies frames while commits go on, so under a steady stream of writes it may never
 * copy the last one: the WAL starts over from its beginning only after a checkpoint that leaves
 * nothing behind, which the writer's own, between two transactions, does. That one holds the
 * event loop (its copy and the database file's fsync): at 4,000 frames it ran three times a
 * second under a stream of creates, and creates took 3-15% more CPU each than at 16,000.
 */
const RESTART_FRAMES = 16_000;
/**
 * A thread that has seen no commit for this long ends, and the next commit starts another: a
 * server whose writes stopped gives the thread's memory back (some 9 MB, a V8 isolate) at once.
 */
const IDLE_MS = 1000;
/** A thread started this soon after the last one ended waits twice as long as that one did... */
const RETURN_WINDOW_MS = 10_000;
/** ...up to this long: writes that come in bursts do not start a thread at each one. */
const MAX_IDLE_MS = 30_000;
/** SQLite's own default, the writer's while no thread runs. */
const AUTOCHECKPOINT_PAGES = 1000;

const COMMITS = 0;
const STOP = 1;
const RESTART = 2;

const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * Checkpoints on a thread of their own. SQLite copies the WAL into the database file at the end
 * of the commit that fills it past 1,000 pages, on the committing connection: here the event loop,
 * held for the copy and the database file's fsync (some 5 ms every dozen group commits, a tenth of
 * the time under a stream of creates). A second connection on a worker thread does the copying
 * instead, and the writer's own connection no longer checkpoints (wal_autocheckpoint = 0) once
 * that thread is running. Started at a commit and ended after a while without one: a store opened
 * only to read starts none, and an idle server does not keep the thread's memory (some 9 MB). The
 * while is a second, doubled for each thread that starts soon after the last one ended.
 */
export class WalCheckpointer {
  private readonly state = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private worker?: Worker;
  /** A thread is up and the writer's connection no longer checkpoints. */
  private running = false;
  /** A thread stopped on an error: the writer's connection checkpoints as SQLite does by default, from then on. */
  private failed = false;
  private readonly checkpoint: Database.Statement;
  /** Where a thread's failure is told: the server's log (SqliteStore.reportWarningsTo), else a process warning. */
  warn: (message: string) => void = (message) => process.emitWarning(message, 'EntigenWarning');

  /** How long the running (or last) thread waits without a commit before it ends. */
  threadIdleMs: number;
  /** When the last thread ended. */
  private endedAt?: number;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly limits = {
      intervalMs: CHECKPOINT_INTERVAL_MS,
      restartFrames: RESTART_FRAMES,
      idleMs: IDLE_MS,
      maxIdleMs: MAX_IDLE_MS,
      returnWindowMs: RETURN_WINDOW_MS,
    },
  ) {
    this.checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    this.threadIdleMs = limits.idleMs;
  }

  /** After each COMMIT of the writer's connection. */
  committed(): void {
    if (!this.worker && !this.failed) this.start();
    Atomics.add(this.state, COMMITS, 1);
    Atomics.notify(this.state, COMMITS);
  }

  /** Before each transaction of the writer's connection, outside any transaction. */
  beforeTransaction(): void {
    if (Atomics.load(this.state, RESTART) === 0) return;
    try {
      const { busy, log, checkpointed } = this.checkpoint.get() as { busy: number; log: number; checkpointed: number };
      // Left set while the thread's own checkpoint holds the lock, or a reader elsewhere holds frames back.
      if (busy === 0 && log === checkpointed) Atomics.store(this.state, RESTART, 0);
    } catch {
      // A disk fault: the transaction about to begin meets it too, and reports it to its caller.
    }
  }

  async close(): Promise<void> {
    const { worker } = this;
    if (!worker) return;
    // Held while it stops: a process with nothing else to do would otherwise exit before the thread does.
    worker.ref();
    Atomics.store(this.state, STOP, 1);
    Atomics.notify(this.state, COMMITS);
    Atomics.notify(this.state, STOP);
    await once(worker, 'exit').catch(() => undefined);
  }

  private start(): void {
    const { idleMs, maxIdleMs, returnWindowMs, intervalMs, restartFrames } = this.limits;
    const soon = this.endedAt !== undefined && Date.now() - this.endedAt < returnWindowMs;
    this.threadIdleMs = soon ? Math.min(this.threadIdleMs * 2, maxIdleMs) : idleMs;
    let worker: Worker;
    try {
      worker = new Worker(CHECKPOINT_WORKER_SOURCE, {
        eval: true,
        workerData: {
          path: this.path,
          driver: driverPath,
          state: this.state.buffer,
          intervalMs,
          restartFrames,
          idleMs: this.threadIdleMs,
        },
      });
    } catch (error) {
      // Called after a commit: its caller must hear of the commit, not of the thread.
      this.fail((error as Error).message);
      return;
    }
    this.worker = worker;
    worker.unref();
    worker.on('message', (message: { ready?: boolean; error?: string }) => {
      if (message.ready && this.worker === worker && this.db.open) {
        this.db.pragma('wal_autocheckpoint = 0');
        this.running = true;
      }
      if (message.error) this.fail(message.error);
    });
    worker.on('error', (error) => this.fail(error.message));
    worker.on('exit', (code) => {
      this.endedAt = Date.now();
      if (this.worker === worker) this.worker = undefined;
      if (this.running) {
        this.running = false;
        if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
      }
      if (code !== 0) this.fail(`the checkpoint thread stopped (exit code ${code})`);
    });
  }

  private fail(reason: string): void {
    if (this.failed) return;
    this.failed = true;
    this.warn(`SQLite checkpoints run on the writer's connection again: ${reason}`);
  }
}
