import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../support/cli.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** Starts `entigen serve` on a free port and resolves with its base URL once it listens. */
function serve(env: Record<string, string>, port = 0): Promise<string> {
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      SESSION_SECRET: 'serve-test',
      LOG_LEVEL: 'info',
      ENTIGEN_ADMIN_EMAIL: 'admin@example.test',
      ENTIGEN_ADMIN_PASSWORD: 'correct horse battery staple!',
      ...env,
    },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
}

describe('entigen serve', () => {
  it('serves the generated app on sqlite::memory:', async () => {
    const url = await serve({ DATABASE_URL: 'sqlite::memory:' });
    const res = await fetch(`${url}/api/v1/articles`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { items: [], totalCount: 0, totalPages: 0 } });
  });

  it('serves on a SQLite file named by sqlite:PATH', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'entigen-serve-')), 'app.db');
    const url = await serve({ DATABASE_URL: `sqlite:${file}` });
    expect((await fetch(`${url}/api/v1/schema/metadata/list`)).status).toBe(200);
    expect(existsSync(file)).toBe(true);
  });

  it('refuses an unsupported DATABASE_URL with a clear message', async () => {
    await expect(serve({ DATABASE_URL: 'oracle://x' })).rejects.toThrow(
      /DATABASE_URL scheme "oracle:" is not supported/,
    );
  });

  it('says where it listens, as bound, on the start line, after one short line of indexes', async () => {
    let output = '';
    const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--host', '127.0.0.1'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        SESSION_SECRET: 'serve-test',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        DATABASE_URL: 'sqlite::memory:',
      },
    });
    children.push(child);
    const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(output)), 20_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk;
        const found = output.split('\n').find((l) => l.includes('"listening"'));
        if (found) {
          clearTimeout(timer);
          resolve(JSON.parse(found));
        }
      });
    });
    // The first start's indexes are one short line; their names wait for LOG_LEVEL=debug.
    const sync = output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => String(l.msg).startsWith('schema sync: added'));
    expect(sync.msg).toMatch(/^schema sync: added \d+ index\(es\) \(LOG_LEVEL=debug names them\)$/);
    expect(sync.indexes).toBeUndefined();
    const port = new URL(line.url as string).port;
    expect(line.listening).toBe(`127.0.0.1:${port}`);
    expect(line.msg).toMatch(
      new RegExp(`^entigen listening on 127\\.0\\.0\\.1:${port} \\(http://127\\.0\\.0\\.1:${port}\\): `),
    );
  });

  it('refuses a port that is taken before it opens or writes the database, and says what to do', async () => {
    const holder = createNetServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    const file = join(mkdtempSync(join(tmpdir(), 'entigen-serve-port-')), 'app.db');
    try {
      await expect(serve({ DATABASE_URL: `sqlite:${file}` }, port)).rejects.toThrow(
        new RegExp(
          `port ${port} on 127\\.0\\.0\\.1 is already in use: is another instance running\\? Stop it, or choose another port with PORT or --port`,
        ),
      );
      expect(existsSync(file)).toBe(false);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('refuses to start in production without DATABASE_URL, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-serve-prod-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      SESSION_SECRET: 's',
      APP_ENCRYPTION_KEY: 'k',
    };
    delete env.DATABASE_URL;
    const child = spawnSync(process.execPath, [cliPath, 'serve', '--port', '0', '--host', '127.0.0.1'], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...env, ENTIGEN_MODULE_CACHE: join(dir, 'cache') },
      timeout: 30_000,
    });
    expect(child.status).not.toBe(0);
    expect(child.stderr).toContain(
      'DATABASE_URL must be set in production: postgres://..., mongodb://... or sqlite:/a/path/app.db',
    );
  });

  it('names where the reference describes a wrong setting', async () => {
    await expect(serve({ DATABASE_URL: 'sqlite::memory:', HTTP_ADAPTER: 'koa' })).rejects.toThrow(
      /HTTP_ADAPTER \(server.adapter\) must be express or node, not "koa"\nentigen: see \S+\/docs\/reference\/environment\.md#server/,
    );
  });

  it("checks entigen.config.yaml against the build's schema first, naming each problem by file:line:col", () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-serve-config-'));
    const config = join(dir, 'entigen.config.yaml');
    const run = () =>
      spawnSync(process.execPath, [cliPath, 'serve', '--port', '0'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, DATABASE_URL: 'sqlite::memory:' },
      });
    writeFileSync(config, 'version: 1\nserver:\n  port: "many"\n  colour: blue\n');
    const refused = run();
    expect(refused.status).toBe(1);
    expect(refused.stderr.split('\n')).toEqual([
      'entigen.config.yaml:3:9 server.port: must be integer',
      expect.stringMatching(/^entigen\.config\.yaml:4:3 server\.colour: unknown key; allowed: port, host/),
      'entigen: 2 problems in entigen.config.yaml; the server did not start',
      '',
    ]);
    // A config the schema takes goes on to the project (here: none built yet).
    writeFileSync(config, 'version: 1\nserver:\n  port: 4000\n');
    expect(run().stderr).toContain('generated/index.ts not found');
  });
});
