#!/usr/bin/env node
// `npm test`: the type checks, then the unit and the integration tests, one after the other. Each
// step runs in a process group of its own, so stopping `npm test` (Ctrl-C, a CI's SIGTERM sent to
// npm alone, a closed terminal) stops the step's vitest, its workers and the servers its tests
// started, instead of leaving them running.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

// `npm test -- --skip-typecheck` leaves out the type checks; other arguments go to vitest (a file
// filter, `-t name`).
const bin = (name) => join(import.meta.dirname, '..', 'node_modules', '.bin', name);
const skipTypecheck = process.argv.includes('--skip-typecheck');
const vitestArgs = process.argv.slice(2).filter((arg) => arg !== '--skip-typecheck');
const STEPS = [
  ...(skipTypecheck
    ? []
    : [
        [bin('tsc'), ['-p', 'tsconfig.json']],
        [bin('tsc'), ['-p', 'admin/tsconfig.json']],
      ]),
  [bin('vitest'), ['run', '--project', 'unit', ...vitestArgs]],
  [bin('vitest'), ['run', '--project', 'integration', ...vitestArgs]],
];
/** How long a stopped step has to end its workers and servers before they are killed. */
const GRACE_MS = 5_000;

let current;
let stopping;

function stop(signal) {
  if (stopping) return;
  stopping = signal;
  if (!current || current.exitCode !== null) process.exit(128 + 15);
  const group = -current.pid;
  try {
    process.kill(group, 'SIGTERM');
  } catch {}
  setTimeout(() => {
    try {
      process.kill(group, 'SIGKILL');
    } catch {}
  }, GRACE_MS).unref();
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop(signal));
// npm may be stopped without telling its script (its shell dies, this process stays): then the
// parent changes, and the tests stop as if told.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop('SIGTERM');
}, 500).unref();

for (const [command, args] of STEPS) {
  if (stopping) break;
  current = spawn(command, args, { stdio: 'inherit', detached: true });
  const code = await new Promise((resolve) => {
    current.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    current.on('error', (error) => {
      console.error(`cannot run ${command}: ${error.message}`);
      resolve(1);
    });
  });
  if (stopping) {
    // The rest of the group (workers, servers) goes too, whatever the step did on its way out.
    try {
      process.kill(-current.pid, 'SIGKILL');
    } catch {}
    process.exit(stopping === 'SIGINT' ? 130 : 143);
  }
  if (code !== 0) process.exit(code);
}
