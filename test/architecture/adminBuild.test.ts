import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { runAsync } from '../support/runAsync.js';

// admin/build/ is committed so that an installed package serves /admin without a front-end build:
// like generated/, it must be exactly what the sources build to.

const committed = join(repoRoot, 'admin', 'build');
/** The console's first load (page, script, stylesheet), gzipped: the budget the admin console guide states. */
const FIRST_LOAD_BUDGET_BYTES = 60 * 1024;

function files(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? files(dir, join(prefix, entry.name)) : [join(prefix, entry.name)]))
    .sort();
}

describe('the admin console build', () => {
  it('is what the sources build to (npm run build:admin after changing admin/)', async () => {
    const out = mkdtempSync(join(tmpdir(), 'entigen-admin-'));
    // A process of its own: vitest's NODE_ENV=test would build other code than `npm run build:admin`.
    const vite = join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');
    const result = await runAsync(
      process.execPath,
      [vite, 'build', '--config', join(repoRoot, 'admin', 'vite.config.ts')],
      {
        cwd: repoRoot,
        env: { ...process.env, NODE_ENV: 'production', ADMIN_OUT_DIR: out },
      },
    );
    expect(result.status, result.stderr).toBe(0);
    expect(files(committed)).toEqual(files(out));
    for (const file of files(out))
      expect(readFileSync(join(committed, file)).equals(readFileSync(join(out, file)))).toBe(true);
  }, 60_000);

  it('stays within its first-load budget', () => {
    const size = files(committed)
      .filter((file) => /\.(html|js|css)$/.test(file))
      .reduce((sum, file) => sum + gzipSync(readFileSync(join(committed, file))).length, 0);
    expect(size).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
  });
});
