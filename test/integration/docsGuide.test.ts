import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../support/cli.js';
import { blocksAfter, docPage } from '../support/docBlocks.js';
import { type SpawnedServer, spawnServer } from '../support/spawnServer.js';

// Runs the guide as written: its entity file, then its curl commands against a fresh server.
const guide = docPage('docs/guide/getting-started.md');
const blockAfter = (marker: string): string[] => blocksAfter(guide, marker);
const ADMIN = { ENTIGEN_ADMIN_EMAIL: 'admin@example.com', ENTIGEN_ADMIN_PASSWORD: 'change me, please!' };

describe('the guide: from zero to a running API', () => {
  let server: SpawnedServer | undefined;
  afterAll(() => server?.child.kill('SIGKILL'));

  it('gets from entigen init to a versioned record through an API key with the curl commands as written', async () => {
    expect(guide).toContain(
      `export ENTIGEN_ADMIN_EMAIL=${ADMIN.ENTIGEN_ADMIN_EMAIL} ENTIGEN_ADMIN_PASSWORD='${ADMIN.ENTIGEN_ADMIN_PASSWORD}'`,
    );
    const project = join(mkdtempSync(join(tmpdir(), 'entigen-guide-')), 'shop');
    expect((await runCli(['init', project], repoRoot)).status).toBe(0);
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(repoRoot, join(project, 'node_modules', 'entigen'), 'dir');
    const files = blockAfter('guide-file');
    expect(files.length).toBeGreaterThan(0);
    for (const block of files) {
      const [path, ...lines] = block.split('\n');
      mkdirSync(dirname(join(project, path)), { recursive: true });
      writeFileSync(join(project, path), lines.join('\n'));
    }
    const built = await runCli(['build'], project);
    expect(built.stderr).toBe('');
    server = await spawnServer({ ...ADMIN, DATABASE_URL: 'sqlite:data/app.db' }, project);

    const [script] = blockAfter('guide-run');
    const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {
      env: { ...process.env, BASE: server.url },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = run.stdout;
    expect(out).toContain('"pages":896');
    expect(out).toMatch(/"items":\[\{"id":"[0-9a-f]{24}","title":"Dune","pages":896\}\]/);
    expect(out).toContain('"changeReason":"page count of the paperback"');
    expect(out).toContain('{"field":"pages","oldValue":412,"newValue":896,"changed":true}');
    expect(out).toContain('"totalChanges":2'); // pages and updatedAt
    expect(out).toMatch(/"success":true,"revertedTo":1,"newVersion":3/);
    expect(out).toContain('"code":"FORBIDDEN"');

    // The business-logic part: the loan hook takes the only copy, refuses a second loan, gives it back.
    const [logic] = blockAfter('guide-run-logic');
    const lent = spawnSync('bash', ['-c', `set -euo pipefail\n${logic}`], {
      env: { ...process.env, BASE: server.url },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(lent.stderr).toBe('');
    expect(lent.status).toBe(0);
    expect(lent.stdout.split('\n').filter((line) => line.startsWith('{"copies"'))).toEqual([
      '{"copies":0}',
      '{"copies":1}',
    ]);
    expect(lent.stdout).toContain(
      '{"error":{"code":"CONFLICT","message":"No copy of Emma is left","details":{"book":"has no copy left"}}}',
    );
    expect(lent.stdout).toContain('{"returned":true}');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(server.output()).toContain('loan created: Ada');

    // The typed client snippet, run as a script of the project with an API key for books.
    const [snippet] = blockAfter('guide-client');
    writeFileSync(join(project, 'client-snippet.mts'), snippet.replaceAll('http://localhost:3000', server.url));
    const login = (await (
      await fetch(`${server.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN.ENTIGEN_ADMIN_EMAIL, password: ADMIN.ENTIGEN_ADMIN_PASSWORD }),
      })
    ).json()) as { token: string };
    const call = async (method: string, path: string, body?: unknown): Promise<any> =>
      (
        await fetch(`${server!.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${login.token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json();
    const key = await call('POST', '/api/v1/apikeys', {
      name: 'client snippet',
      permissions: ['books:view', 'books:edit:all'],
      expiresAt: '2030-01-01T00:00:00Z',
    });
    const client = await runCli(['run', 'client-snippet.mts'], project, { BOOKS_KEY: key.data.token });
    expect(client.stderr).toBe('');
    expect(client.status).toBe(0);
    // The longest fiction book got 900 pages, with the reason as its version's.
    const longest = (await call('GET', '/api/v1/books?genre=fiction&sort=-pages&limit=1')).data.items[0];
    expect(longest.pages).toBe(900);
    const versions = await call('GET', `/api/v1/books/${longest.id}/versions`);
    expect(versions.items[0]).toMatchObject({ changeReason: 'reprint' });
  });
});
