import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { runAsync } from '../support/runAsync.js';
import { serveUntilHealthy } from '../support/serveUntilHealthy.js';

// The package installed into a fresh project, as a user would: npm install <path>, npx entigen build, tsc.
describe('entigen as a dependency', () => {
  it('builds the project entities and the output type-checks under strict', async () => {
    const project = mkdtempSync(join(tmpdir(), 'entigen-consumer-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    mkdirSync(join(project, 'entities'));
    writeFileSync(
      join(project, 'entities', 'widgets.yaml'),
      'version: 1\nname: Widget\nplural: widgets\nbase: owned\nversioning: simple\nfields:\n' +
        '  label: { type: string, required: true, search: true }\n  size: { type: enum, values: [s, m, l] }\n' +
        '  owner2: { type: objectId, ref: users }\n  specs: { type: object, properties: { weight: { type: float } } }\nfilters: [size]\n',
    );
    // Long commands run asynchronously: a synchronous one of a minute starves the test worker's RPC.
    expect(
      (await runAsync('npm', ['install', repoRoot, '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project }))
        .status,
    ).toBe(0);

    const result = spawnSync('npx', ['--no-install', 'entigen', 'build'], { cwd: project, encoding: 'utf8' });
    expect(result.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(result.status).toBe(0);
    expect(existsSync(join(project, 'generated', 'validators', 'widgets.js'))).toBe(true);
    expect(existsSync(join(project, 'generated', 'validators', 'users.js'))).toBe(true);
    const openapi = spawnSync('npx', ['--no-install', 'entigen', 'openapi'], { cwd: project, encoding: 'utf8' });
    expect(openapi.status).toBe(0);
    expect(Object.keys(JSON.parse(openapi.stdout).paths)).toContain('/api/v1/widgets/{id}');

    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          resolveJsonModule: true,
          types: [],
        },
        include: ['generated', 'use.ts'],
      }),
    );
    // Application code using the generated types from a CommonJS project.
    writeFileSync(
      join(project, 'use.ts'),
      "import type { Widget, WidgetCreate } from './generated/types.js';\n" +
        "const input: WidgetCreate = { label: 'x', size: 'm' };\n" +
        "export const sample: Pick<Widget, 'label'> = { label: input.label };\n",
    );
    const tsc = await runAsync(
      process.execPath,
      [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
      { cwd: project },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    // The generated registry loads in plain Node from the CommonJS project.
    const load = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import('./generated/validators/widgets.js').then((m) => console.log(m.create({ label: 'a' }), m.create({})))",
      ],
      { cwd: project, encoding: 'utf8' },
    );
    expect(load.stdout.trim()).toBe('true false');
  });
});

describe('entigen init', () => {
  // npm start, the typed client and two npm run typecheck (each a build that type-checks the
  // hooks, then tsc): over a minute on a loaded two-core machine.
  it('scaffolds a project whose npm start builds and serves at once, first visit at /setup', {
    timeout: 240_000,
  }, async () => {
    const project = join(mkdtempSync(join(tmpdir(), 'entigen-init-')), 'notes-app');
    const init = spawnSync(process.execPath, [join(repoRoot, 'dist', 'bin', 'entigen.js'), 'init', project], {
      encoding: 'utf8',
    });
    expect(init.status).toBe(0);
    expect(init.stdout).toContain('npm install && npm start');
    expect(
      (await runAsync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project })).status,
    ).toBe(0);
    const start = spawn('npm', ['start'], {
      cwd: project,
      detached: true,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    });
    await serveUntilHealthy(start, async (url) => {
      const first = await fetch(`${url}/api/v1/notes`, { redirect: 'manual' });
      expect(first.status).toBe(503);
      expect(((await first.json()) as { error: { message: string } }).error.message).toContain('/setup');
      const browser = await fetch(`${url}/`, { redirect: 'manual' });
      expect(browser.status).toBe(302);
      expect(browser.headers.get('location')).toBe('/setup');
      const setup = await fetch(`${url}/setup`);
      expect(setup.status).toBe(200);
      expect(await setup.text()).toContain('<form');
      expect(existsSync(join(project, 'generated', 'client.ts'))).toBe(true);

      // The scaffolded typed-client example runs against the server (and type-checks, below).
      const admin = { name: 'Example Admin', email: 'example@example.test', password: 'correct horse battery staple!' };
      expect(
        (
          await fetch(`${url}/setup`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(admin),
          })
        ).status,
      ).toBe(201);
      const example = await runAsync('npm', ['run', '--silent', 'client-example'], {
        cwd: project,
        env: { ...process.env, BASE_URL: url, ENTIGEN_EMAIL: admin.email, ENTIGEN_PASSWORD: admin.password },
      });
      expect(example.stderr.replace(/npm warn.*\n/g, '')).toBe('');
      expect(example.stdout).toMatch(
        /^created note [0-9a-f]{24}: Written by the typed client\n1 pinned note\(s\); newest: Written by the typed client\n$/,
      );
    });
    // After the server is gone: the scaffold's own type check (its tsconfig, its typescript)
    // passes on the scaffold, and refuses a hook that returns what the entity does not take.
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(manifest.dependencies.entigen).toMatch(/^file:\.\.\//);
    const typecheck = () => runAsync('npm', ['run', '--silent', 'typecheck'], { cwd: project });
    const passed = await typecheck();
    expect(passed.stdout + passed.stderr).not.toContain('error');
    expect(passed.status).toBe(0);
    const hook = join(project, 'hooks', 'notes.ts');
    const original = readFileSync(hook, 'utf8');
    expect(original).toContain('return { ...data, title: data.title.trim() };');
    writeFileSync(
      hook,
      original.replace('return { ...data, title: data.title.trim() };', 'return { ...data, title: 42 };'),
    );
    const refused = await typecheck();
    expect(refused.status).not.toBe(0);
    // entigen build itself type-checks the hooks now: it names the place, before tsc runs.
    expect(refused.stdout + refused.stderr).toMatch(
      /hooks\/notes\.ts:\d+:\d+ Type .*Type 'number' is not assignable to type 'string'/,
    );
    expect(refused.stdout + refused.stderr).toContain('1 type error(s) in hooks and jobs');
  });
});
