import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const cliPath = join(repoRoot, 'dist', 'bin', 'entigen.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the compiled CLI in `cwd`. Asynchronous on purpose: a test worker blocked in spawnSync for
 * long misses vitest's own messages ("Timeout calling onTaskUpdate").
 */
export function runCli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A temporary copy of the example app (entities and config), without its generated files. */
export function copyExampleApp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'entigen-app-'));
  cpSync(join(repoRoot, 'entities'), join(dir, 'entities'), {
    recursive: true,
    filter: (src) => !/[/\\](builtin|features)([/\\]|$)/.test(src),
  });
  cpSync(join(repoRoot, 'entigen.config.yaml'), join(dir, 'entigen.config.yaml'));
  cpSync(join(repoRoot, 'hooks'), join(dir, 'hooks'), { recursive: true });
  return dir;
}

/** A copy of the example app that can serve on its own: its jobs, and `entigen` resolving to this checkout. */
export function servableApp(): string {
  const app = copyExampleApp();
  cpSync(join(repoRoot, 'jobs'), join(app, 'jobs'), { recursive: true });
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(repoRoot, join(app, 'node_modules', 'entigen'), 'dir');
  return app;
}
