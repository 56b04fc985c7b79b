import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliPath, servableApp } from '../support/cli.js';
import { ADMIN_ENV } from '../support/spawnServer.js';

describe('entigen dev', () => {
  const app = servableApp();
  const child = spawn(process.execPath, [cliPath, 'dev', '--port', '0', '--host', '127.0.0.1'], {
    cwd: app,
    env: {
      ...process.env,
      DATABASE_URL: 'sqlite:data/dev.db',
      SESSION_SECRET: 'dev-test',
      LOG_LEVEL: 'info',
      ...ADMIN_ENV,
    },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  afterAll(() => void child.kill('SIGKILL'));

  /** Waits until the output holds `count` matches of the pattern; returns the last. */
  const waitFor = async (pattern: RegExp, count: number): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const matches = [...output.matchAll(new RegExp(pattern.source, 'g'))];
      if (matches.length >= count) return matches[count - 1];
      if (Date.now() > deadline) throw new Error(`no ${pattern} (x${count}) in:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const listening = /"url":"(http:\/\/[^"]+)"/;
  const fieldsOf = async (url: string) => {
    const response = await fetch(`${url}/api/v1/schema/metadata/articles`);
    return ((await response.json()) as { data: { fields: { name: string }[] } }).data.fields.map((f) => f.name);
  };
  const file = join(app, 'entities', 'articles.yaml');
  const original = readFileSync(file, 'utf8');

  it('builds and serves, then serves a field added to an entity file after a rebuild and restart', async () => {
    const first = (await waitFor(listening, 1))[1];
    expect(await fieldsOf(first)).not.toContain('subtitle');
    const edited = Date.now();
    writeFileSync(file, original.replace('fields:\n', 'fields:\n  subtitle: { type: string }\n'));
    const second = (await waitFor(listening, 2))[1];
    console.log(`entigen dev: edit to serving the new field in ${Date.now() - edited} ms`);
    expect(await fieldsOf(second)).toContain('subtitle');
    expect(output).toMatch(/entigen dev: entities\/articles\.yaml changed: \d+ entities built/);
  });

  it('shows build errors without dying, keeps serving the last good build, and recovers when the file is fixed', async () => {
    const serving = (await waitFor(listening, 2))[1];
    writeFileSync(file, original.replace('fields:\n', 'fields:\n  subtitle: { type: strng }\n'));
    await waitFor(/the previous build keeps serving/, 1);
    expect(output).toMatch(/entities\/articles\.yaml:\d+:\d+ fields\.subtitle\.type: /);
    expect((await fetch(`${serving}/api/health`)).status).toBe(200);
    writeFileSync(
      file,
      original.replace('fields:\n', 'fields:\n  subtitle: { type: string }\n  teaser: { type: string }\n'),
    );
    const third = (await waitFor(listening, 3))[1];
    expect(await fieldsOf(third)).toEqual(expect.arrayContaining(['subtitle', 'teaser']));
  });

  it('rebuilds on every save by rename-replace (vim, JetBrains, sed -i), and on a new migration file', async () => {
    const saveByRename = (text: string) => {
      const temp = join(app, 'entities', '.articles.yaml.swp');
      writeFileSync(temp, text);
      renameSync(temp, file);
    };
    const fields = ['  subtitle: { type: string }', '  teaser: { type: string }'];
    saveByRename(original.replace('fields:\n', `fields:\n${[...fields, '  kicker: { type: string }'].join('\n')}\n`));
    expect(await fieldsOf((await waitFor(listening, 4))[1])).toContain('kicker');
    // The second and third saves of the same file are seen too: the folder is watched, not the replaced file.
    saveByRename(
      original.replace(
        'fields:\n',
        `fields:\n${[...fields, '  kicker: { type: string }', '  byline: { type: string }'].join('\n')}\n`,
      ),
    );
    expect(await fieldsOf((await waitFor(listening, 5))[1])).toContain('byline');
    saveByRename(
      original.replace(
        'fields:\n',
        `fields:\n${[...fields, '  kicker: { type: string }', '  byline: { type: string }', '  dek: { type: string }'].join('\n')}\n`,
      ),
    );
    expect(await fieldsOf((await waitFor(listening, 6))[1])).toContain('dek');
    mkdirSync(join(app, 'migrations'), { recursive: true });
    writeFileSync(join(app, 'migrations', '20260101000000_noop.yaml'), 'covers: []\nsteps: []\n');
    await waitFor(/entigen dev: migrations\/[^ ]* changed: \d+ entities built/, 1);
  });

  it('rebuilds and restarts when a hook module or a job handler changes', async () => {
    const served = () => [...output.matchAll(new RegExp(listening.source, 'g'))].length;
    // The migration of the test before is pending, which stops the server from starting: drop it.
    let before = served();
    rmSync(join(app, 'migrations', '20260101000000_noop.yaml'));
    await waitFor(listening, before + 1);
    const hook = join(app, 'hooks', 'orders.ts');
    before = served();
    writeFileSync(hook, `${readFileSync(hook, 'utf8')}\n// edited\n`);
    await waitFor(listening, before + 1);
    expect(output).toMatch(/entigen dev: hooks\/orders\.ts changed: \d+ entities built/);
    before = served();
    const handlers = join(app, 'jobs', 'handlers.ts');
    writeFileSync(handlers, `${readFileSync(handlers, 'utf8')}\n// edited\n`);
    await waitFor(listening, before + 1);
    expect(output).toMatch(/entigen dev: jobs\/handlers\.ts changed: \d+ entities built/);
    expect(output).toMatch(/watching entities\/, migrations\/, hooks\/, jobs\/, entigen\.config\.yaml/);
  });

  it('stops its server and exits 0 on SIGTERM', async () => {
    const last = (await waitFor(listening, 3))[1];
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${last}/api/health`)).rejects.toThrow();
  });
});
