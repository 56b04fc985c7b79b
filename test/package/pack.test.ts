import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { expectConsoleServed } from '../support/consoleServed.js';
import { runAsync } from '../support/runAsync.js';
import { serveUntilHealthy } from '../support/serveUntilHealthy.js';

// The tarball npm pack makes, installed as a registry user would get it: no dev dependencies, no build step.
describe('npm pack', () => {
  it('installs into a fresh project without dev dependencies, then builds and serves', {
    timeout: 900_000,
  }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'entigen-pack-'));
    const pack = await runAsync('npm', ['pack', '--json', '--pack-destination', out], { cwd: repoRoot });
    expect(pack.status, pack.stderr).toBe(0);
    const packed = JSON.parse(pack.stdout);
    const tarball = join(out, packed[0].filename);
    const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
    expect(files).toContain('dist/bin/entigen.js');
    expect(files).toContain('dist/runtime/index.d.ts');
    expect(files.some((f) => f.startsWith('test/') || f.startsWith('node_modules/') || f.endsWith('.test.js'))).toBe(
      false,
    );

    const project = mkdtempSync(join(tmpdir(), 'entigen-from-tarball-'));
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'from-tarball', version: '1.0.0', private: true }),
    );
    const init = spawnSync(process.execPath, [join(repoRoot, 'dist', 'bin', 'entigen.js'), 'init', project], {
      encoding: 'utf8',
    });
    expect(init.status).toBe(0);
    const install = await runAsync('npm', ['install', tarball, '--omit=dev', '--no-audit', '--no-fund'], {
      cwd: project,
    });
    expect(install.status, install.stderr).toBe(0);
    const installed = readdirSync(join(project, 'node_modules'));
    for (const dev of ['typescript', 'vitest', 'fast-check', 'playwright-core']) expect(installed).not.toContain(dev);
    // TypeBox's type builder ships as one bundled file, not an import of the package's 200 modules.
    const typebox = join(project, 'node_modules', 'entigen', 'dist', 'runtime', 'api', 'typebox.js');
    expect(readFileSync(typebox, 'utf8')).not.toMatch(/^import |from ['"]@sinclair\/typebox/m);

    const build = spawnSync('npx', ['--no-install', 'entigen', 'build'], { cwd: project, encoding: 'utf8' });
    expect(build.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(build.status).toBe(0);
    expect(existsSync(join(project, 'generated', 'index.ts'))).toBe(true);
    const serve = spawn('npx', ['--no-install', 'entigen', 'serve'], {
      cwd: project,
      detached: true,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
    });
    await serveUntilHealthy(serve, async (url) => {
      expect((await fetch(`${url}/api/health`)).status).toBe(200);
      // Before setup the API says what to do; a browser's page goes to the form.
      const api = await fetch(`${url}/api/v1/notes`, { redirect: 'manual' });
      expect(api.status).toBe(503);
      expect(((await api.json()) as { error: { message: string } }).error.message).toContain('/setup');
      expect((await fetch(`${url}/`, { redirect: 'manual' })).headers.get('location')).toBe('/setup');
      await expectConsoleServed(url);
    });
    // The project's modules were compiled once into the cache, not loaded through a TypeScript loader.
    const cache = join(project, 'node_modules', '.cache', 'entigen');
    expect(readdirSync(cache).some((key) => existsSync(join(cache, key, 'manifest.json')))).toBe(true);
  });
});
