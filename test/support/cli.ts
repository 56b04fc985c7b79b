import { spawnSync } from 'node:child_process';
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

/** Runs the compiled CLI in `cwd`. */
export function runCli(args: string[], cwd: string, env: Record<string, string> = {}): CliResult {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
    // `entigen openapi` prints the whole document (over a megabyte, spawnSync's default).
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
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
