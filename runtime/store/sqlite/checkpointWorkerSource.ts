/**
 * The checkpoint thread's program (walCheckpointer.ts), run as a worker's source text: a file of
 * its own would not exist when the runtime runs from its TypeScript sources (the test suites).
 * `state` is shared with the writer: [commits, stop, restart wanted]. It sleeps until a commit,
 * lets commits gather for `intervalMs`, then copies the WAL's frames into the database file
 * (PASSIVE: it never waits for, nor holds up, the writer or a reader), and asks the writer for a
 * checkpoint of its own once the WAL has grown past `restartFrames` without starting over. After
 * `idleMs` without a commit it checkpoints once more and ends: the writer checkpoints again.
 */
export const CHECKPOINT_WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const COMMITS = 0, STOP = 1, RESTART = 2;
const state = new Int32Array(workerData.state);
const stopping = () => Atomics.load(state, STOP) !== 0;
let db;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = FULL');
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  parentPort.postMessage({ ready: true });
  // The commit that started the thread, and any since, wait for its first checkpoint.
  let seen = Atomics.load(state, COMMITS) - 1;
  while (!stopping()) {
    const woke = Atomics.wait(state, COMMITS, seen, workerData.idleMs);
    if (stopping()) break;
    if (woke === 'timed-out') {
      checkpoint.get();
      break;
    }
    Atomics.wait(state, STOP, 0, workerData.intervalMs);
    if (stopping()) break;
    seen = Atomics.load(state, COMMITS);
    // The writer's turn: its checkpoint would find this one's lock taken, and try again and again.
    if (Atomics.load(state, RESTART) !== 0) continue;
    let { log, checkpointed } = checkpoint.get();
    // Commits went on during the copy: a second pass copies only those, and may find the WAL's end.
    if (checkpointed < log) ({ log } = checkpoint.get());
    // Even a pass that found the end may have missed a commit made meanwhile: the writer's own
    // checkpoint, between two of its transactions, knows, and costs nothing when there is none.
    if (log >= workerData.restartFrames) Atomics.store(state, RESTART, 1);
  }
} catch (error) {
  parentPort.postMessage({ error: String((error && error.message) || error) });
} finally {
  if (db && db.open) db.close();
}
`;
