import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliPath, repoRoot, runCli } from '../support/cli.js';
import { ADMIN_ENV, spawnServer } from '../support/spawnServer.js';

// Every recipe of the documentation is a folder of real files (docs/recipes/<name>/) and a page
// (docs/recipes/<name>.md) that shows them. Each is built and served here as a new project (by
// `entigen serve`, or by its own server.mts through `entigen run` when it has one), and its
// requests.sh runs against it as written; what it prints must be its expected.txt.
const recipesDir = join(repoRoot, 'docs', 'recipes');
const recipes = readdirSync(recipesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** Files of a recipe folder that are not part of the project. */
const NOT_PROJECT = new Set(['requests.sh', 'expected.txt']);
/** Packages a recipe's own server imports besides entigen, installed from entigen's. */
const HOST_PACKAGES = ['express'];
/** The administrator a recipe's requests sign in as. */
const ADMIN = { ENTIGEN_ADMIN_EMAIL: 'admin@example.com', ENTIGEN_ADMIN_PASSWORD: 'change me, please!' };

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesOf(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The recipe's own server.mts, run as its page says; resolves with its URL once entigen answers. */
async function hostServer(project: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [cliPath, 'run', 'server.mts'], {
    cwd: project,
    env: { ...process.env, ...ADMIN_ENV, SESSION_SECRET: 'recipe-test', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`server.mts exited with ${child.exitCode}:\n${output}`);
    const up = await fetch(`${url}/api/health`).then(
      (res) => res.ok,
      () => false,
    );
    if (up) return { url, child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server.mts did not answer:\n${output}`);
}

describe('the recipes, built, served and run as the documentation shows them', () => {
  const servers: ChildProcess[] = [];
  afterAll(() => {
    for (const child of servers) child.kill('SIGKILL');
  });

  it('has recipes', () => {
    expect(recipes).toContain('support-desk');
  });

  it.each(recipes)('%s', async (name) => {
    const folder = join(recipesDir, name);
    const files = filesOf(folder).map((file) => relative(folder, file));
    // The page shows every file of the folder, so what the reader sees is what runs here.
    const page = readFileSync(join(recipesDir, `${name}.md`), 'utf8');
    for (const file of files) expect(page, `${name}.md shows ${file}`).toContain(`<<< @/recipes/${name}/${file}`);

    const project = join(mkdtempSync(join(tmpdir(), `entigen-recipe-${name}-`)), name);
    expect((await runCli(['init', project], repoRoot)).status).toBe(0);
    // Only the recipe: the scaffold's example entity goes.
    for (const scaffold of ['entities/notes.yaml', 'hooks/notes.ts', 'client-example.mts'])
      rmSync(join(project, scaffold));
    for (const file of files.filter((f) => !NOT_PROJECT.has(f))) {
      cpSync(join(folder, file), join(project, file), { recursive: true });
    }
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    if (!existsSync(join(project, 'node_modules', 'entigen')))
      symlinkSync(repoRoot, join(project, 'node_modules', 'entigen'), 'dir');
    const host = files.includes('server.mts');
    if (host)
      for (const name of HOST_PACKAGES)
        symlinkSync(join(repoRoot, 'node_modules', name), join(project, 'node_modules', name), 'dir');
    const built = await runCli(['build'], project);
    expect(built.stderr).toBe('');
    const env = { ...ADMIN, DATABASE_URL: 'sqlite:data/recipe.db' };
    const server = host ? await hostServer(project, env) : await spawnServer(env, project);
    servers.push(server.child);

    const run = spawnSync('bash', ['-c', `set -euo pipefail\n${readFileSync(join(folder, 'requests.sh'), 'utf8')}`], {
      env: { ...process.env, BASE: server.url },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(readFileSync(join(folder, 'expected.txt'), 'utf8'));
  });
});
