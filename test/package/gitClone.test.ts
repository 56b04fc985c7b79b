import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { expectConsoleServed } from '../support/consoleServed.js';
import { runAsync } from '../support/runAsync.js';
import { serveUntilHealthy } from '../support/serveUntilHealthy.js';

// A fresh git clone has no node_modules and no dist/; installing it without dev dependencies
// (NODE_ENV=production, --omit=dev) must still prepare a working CLI.
describe('a fresh git clone', () => {
  it('installs with --omit=dev without failing on prepare, and its CLI builds and serves a project', {
    timeout: 900_000,
  }, async () => {
    const clone = join(mkdtempSync(join(tmpdir(), 'entigen-clone-')), 'entigen');
    execFileSync('git', ['clone', '--quiet', repoRoot, clone], { stdio: 'pipe' });
    expect(existsSync(join(clone, 'node_modules'))).toBe(false);
    const install = await runAsync('npm', ['install', '--omit=dev', '--no-audit', '--no-fund'], { cwd: clone });
    expect(install.status, install.stderr).toBe(0);
    // The clone stays as it was cloned: npm rewrites no line of the lock, and every install
    // script it meets is one package.json allows or denies.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: clone, encoding: 'utf8' })).toBe('');
    expect(install.stderr).not.toContain('install-scripts');
    expect(existsSync(join(clone, 'node_modules', 'typescript'))).toBe(false);
    const cli = join(clone, 'dist', 'bin', 'entigen.js');
    expect(existsSync(cli)).toBe(true);
    // TypeBox's type builder is one bundled file, not an import of the package's 200 modules.
    const typebox = readFileSync(join(clone, 'dist', 'runtime', 'api', 'typebox.js'), 'utf8');
    expect(typebox).not.toMatch(/^import |from ['"]@sinclair\/typebox/m);
    expect(typebox).toMatch(/export \{\s+Type\s+\}/);

    const project = join(mkdtempSync(join(tmpdir(), 'entigen-clone-app-')), 'app');
    expect(spawnSync(process.execPath, [cli, 'init', project], { encoding: 'utf8' }).status).toBe(0);
    // The project resolves entigen/runtime to the clone, as `npm install ../entigen` would link it.
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    symlinkSync(clone, join(project, 'node_modules', 'entigen'), 'dir');
    const build = spawnSync(process.execPath, [cli, 'build'], { cwd: project, encoding: 'utf8' });
    expect(build.stderr).toBe('');
    expect(build.status).toBe(0);
    const serve = spawn(process.execPath, [cli, 'serve'], {
      cwd: project,
      detached: true,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
    });
    await serveUntilHealthy(serve, async (url) => {
      expect((await fetch(`${url}/api/health`)).status).toBe(200);
      await expectConsoleServed(url);
    });
  });
});
