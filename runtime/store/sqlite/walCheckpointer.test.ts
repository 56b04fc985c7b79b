import { copyFileSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { conformanceModel, newThing as thing } from '../../../test/conformance/storeConformance.js';
import { GroupCommit } from './groupCommit.js';
import { SqliteStore } from './sqliteStore.js';
import { WalCheckpointer } from './walCheckpointer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dbOf = (store: SqliteStore) => (store as unknown as { shared: { db: Database.Database } }).shared.db;

/**
 * Rows of `table` in the database file alone, as a copy without the WAL reads it; -1 when the copy
 * was taken while the thread was writing pages into the file (a torn copy: ask again).
 */
function rowsInFileAlone(path: string, table: string): number {
  const copy = `${path}.copy`;
  copyFileSync(path, copy);
  const db = new Database(copy, { readonly: true });
  try {
    // Before the first checkpoint the file holds not even the table.
    const exists = db.prepare('SELECT 1 FROM sqlite_schema WHERE name = ?').get(table);
    return exists ? (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n : 0;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CORRUPT') return -1;
    throw error;
  } finally {
    db.close();
  }
}

/** A bare WAL database with table `t` (the columns given), for the checkpointer without a store. */
function walDatabase(name: string, columns = 'id INTEGER PRIMARY KEY'): { path: string; db: Database.Database } {
  const path = join(mkdtempSync(join(tmpdir(), 'entigen-wal-')), name);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE t (${columns})`);
  return { path, db };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(25);
}

describe('checkpoints on a thread of their own', () => {
  it('copies committed pages into the database file, and the writer no longer checkpoints', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'entigen-wal-')), 'w.db');
    const store = SqliteStore.open(path);
    await store.init(conformanceModel);
    const db = dbOf(store);
    // SQLite alone would leave 30 small commits in the WAL: they stay far below 1,000 pages.
    for (let i = 0; i < 30; i++) await store.insert('things', thing(`t${i}`));
    await until(
      () => rowsInFileAlone(path, 'things') === 30 && db.pragma('wal_autocheckpoint', { simple: true }) === 0,
    );
    expect(rowsInFileAlone(path, 'things')).toBe(30);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await store.close();
    // The writer's connection closed last: SQLite checkpointed and removed the WAL.
    expect(() => statSync(`${path}-wal`)).toThrow();
  });

  it("leaves the writer's view of other connections' commits alone", async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'entigen-wal-')), 'v.db');
    const store = SqliteStore.open(path);
    await store.init(conformanceModel);
    const db = dbOf(store);
    const version = db.prepare('PRAGMA data_version').pluck();
    for (let i = 0; i < 5; i++) await store.insert('things', thing(`t${i}`));
    const before = version.get();
    await until(() => rowsInFileAlone(path, 'things') === 5);
    expect(rowsInFileAlone(path, 'things')).toBe(5);
    // The thread's checkpoint is not a commit: the caches of the writer's process stay valid.
    expect(version.get()).toBe(before);
    await store.close();
  });

  it('starts the WAL over under a steady stream of commits', async () => {
    const { path, db } = walDatabase('s.db', 'id INTEGER PRIMARY KEY, body TEXT');
    db.pragma('synchronous = OFF');
    const restartFrames = 200;
    const checkpointer = new WalCheckpointer(db, path, {
      intervalMs: 5,
      restartFrames,
      idleMs: 5000,
      maxIdleMs: 5000,
      returnWindowMs: 0,
    });
    const group = new GroupCommit(db, () => {}, [], checkpointer);
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const body = 'x'.repeat(3000);
    // The first commit starts the thread; the writer stops checkpointing once it runs.
    await group.run(async () => insert.run(body));
    await until(() => db.pragma('wal_autocheckpoint', { simple: true }) === 0);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    let largest = 0;
    // A frame or two a commit, 20,000 commits without a pause: the thread never finds the WAL quiet.
    for (let i = 1; i < 20_000; i++) {
      await group.run(async () => insert.run(body));
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    // Were no checkpoint ever to leave nothing behind, the WAL would hold every frame (over 80 MB).
    // It grows past restartFrames while the thread's pass runs: how far depends on this machine's load.
    expect(largest).toBeLessThan(40 * 1024 * 1024);
    expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(20_000);
    await checkpointer.close();
    db.close();
  });

  it("leaves checkpoints to the writer's connection, and says so, when the thread cannot run", async () => {
    const { path, db } = walDatabase('f.db');
    const warnings: string[] = [];
    const listen = (warning: Error) => warnings.push(warning.message);
    process.on('warning', listen);
    const checkpointer = new WalCheckpointer(db, join(path, 'not-a-database'));
    const group = new GroupCommit(db, () => {}, [], checkpointer);
    await group.run(async () => db.prepare('INSERT INTO t DEFAULT VALUES').run());
    await until(() => warnings.length > 0);
    process.off('warning', listen);
    expect(warnings[0]).toMatch(/^SQLite checkpoints run on the writer's connection again: /);
    await group.run(async () => db.prepare('INSERT INTO t DEFAULT VALUES').run());
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await checkpointer.close();
    db.close();
  });

  it('ends the thread after a while without commits, and the writer checkpoints until the next one', async () => {
    const { path, db } = walDatabase('i.db');
    const checkpointer = new WalCheckpointer(db, path, {
      intervalMs: 5,
      restartFrames: 4000,
      idleMs: 200,
      maxIdleMs: 200,
      returnWindowMs: 0,
    });
    const group = new GroupCommit(db, () => {}, [], checkpointer);
    const autocheckpoint = () => db.pragma('wal_autocheckpoint', { simple: true });
    for (const round of [1, 2]) {
      await group.run(async () => db.prepare('INSERT INTO t DEFAULT VALUES').run());
      await until(() => autocheckpoint() === 0);
      expect(autocheckpoint(), `round ${round}: a thread runs`).toBe(0);
      await until(() => autocheckpoint() === 1000);
      expect(autocheckpoint(), `round ${round}: the thread ended`).toBe(1000);
    }
    // The threads copied both rows into the database file.
    expect(rowsInFileAlone(path, 't')).toBe(2);
    db.close();
  });

  it('waits twice as long with each thread started soon after the last one ended, and a second again later', async () => {
    const { path, db } = walDatabase('b.db');
    const limits = { intervalMs: 5, restartFrames: 4000, idleMs: 100, maxIdleMs: 400, returnWindowMs: 1500 };
    const checkpointer = new WalCheckpointer(db, path, limits);
    const group = new GroupCommit(db, () => {}, [], checkpointer);
    const autocheckpoint = () => db.pragma('wal_autocheckpoint', { simple: true });
    const burst = async () => {
      await group.run(async () => db.prepare('INSERT INTO t DEFAULT VALUES').run());
      const idle = checkpointer.threadIdleMs;
      await until(() => autocheckpoint() === 0);
      await until(() => autocheckpoint() === 1000);
      expect(autocheckpoint(), 'the thread ended').toBe(1000);
      return idle;
    };
    const idles = [await burst(), await burst(), await burst(), await burst()];
    expect(idles).toEqual([100, 200, 400, 400]);
    await sleep(1600);
    expect(await burst()).toBe(100);
    expect(rowsInFileAlone(path, 't')).toBe(5);
    db.close();
  });
});
