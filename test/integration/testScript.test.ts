import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';

/** The processes below `pid` now, from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(join('/proc', name, 'stat'), 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
};

it('stops every vitest worker and every server the tests started when npm is stopped alone', async () => {
  // The script as npm runs it, under a shell, on a test file that starts real servers; then the
  // shell alone is stopped, as when a CI's timeout stops npm (the script is not told).
  const script: ChildProcess = spawn(
    '/bin/sh',
    ['-c', 'node scripts/test.mjs --skip-typecheck --passWithNoTests test/integration/processes.test.ts; exit $?'],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A vitest of its own, not a worker of this one.
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST'))),
        ENTIGEN_TEST_DIST_BUILT: '1',
      },
    },
  );
  let output = '';
  script.stdout!.on('data', (chunk) => (output += chunk));
  script.stderr!.on('data', (chunk) => (output += chunk));
  // Until the integration run has started a server.
  const until = Date.now() + 60_000;
  let running: number[] = [];
  while (Date.now() < until) {
    running = descendants(script.pid!);
    const commands = running.map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    });
    // vitest renames its processes ("node (vitest 1)"); a server is `entigen.js serve`.
    if (commands.some((c) => c.includes('entigen.js\u0000serve'))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(running.length, output).toBeGreaterThan(2);
  script.kill('SIGTERM');
  // The script notices its parent is gone, stops its step's process group, and within the grace
  // period nothing it started is left.
  const gone = Date.now() + 10_000;
  while (running.some(alive) && Date.now() < gone) await new Promise((r) => setTimeout(r, 200));
  expect(running.filter(alive), output.slice(-2000)).toEqual([]);
}, 120_000);
