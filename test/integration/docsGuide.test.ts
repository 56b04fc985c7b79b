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
  });
});
