import type { ChildProcess } from 'node:child_process';

/** Waits for `entigen serve` (started detached) to log its URL, runs `check` against it, then stops the whole process group. */
export async function serveUntilHealthy(child: ChildProcess, check: (url: string) => Promise<void>): Promise<void> {
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  try {
    const deadline = Date.now() + 60_000;
    let url: string | undefined;
    while (!url) {
      url = /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1];
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`entigen serve did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await check(url);
  } finally {
    if (child.pid) process.kill(-child.pid, 'SIGTERM');
  }
}
