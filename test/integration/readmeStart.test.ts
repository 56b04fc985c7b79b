import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../support/cli.js';
import { blocksAfter, docPage } from '../support/docBlocks.js';
import { type SpawnedServer, spawnServer } from '../support/spawnServer.js';

// The README's five-minute start as written: init, its entity file, then its requests (on the
// test server's port instead of 3000).
const readme = docPage('README.md');
const ADMIN = { ENTIGEN_ADMIN_EMAIL: 'admin@example.com', ENTIGEN_ADMIN_PASSWORD: 'change me, please!' };

describe("the README's five-minute start", () => {
  let server: SpawnedServer | undefined;
  afterAll(() => server?.child.kill('SIGKILL'));

  it('gets from entigen init to a book listed anonymously with the commands as written', async () => {
    expect(readme).toContain(
      `export ENTIGEN_ADMIN_EMAIL=${ADMIN.ENTIGEN_ADMIN_EMAIL} ENTIGEN_ADMIN_PASSWORD='${ADMIN.ENTIGEN_ADMIN_PASSWORD}'`,
    );
    const project = join(mkdtempSync(join(tmpdir(), 'entigen-start-')), 'shop');
    expect((await runCli(['init', project], repoRoot)).status).toBe(0);
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(repoRoot, join(project, 'node_modules', 'entigen'), 'dir');
    const files = blocksAfter(readme, 'start-file');
    expect(files.map((block) => block.split('\n')[0])).toEqual(['entities/books.yaml']);
    for (const block of files) {
      const [path, ...lines] = block.split('\n');
      mkdirSync(dirname(join(project, path)), { recursive: true });
      writeFileSync(join(project, path), lines.join('\n'));
    }
    const built = await runCli(['build'], project);
    expect(built.stderr).toBe('');
    server = await spawnServer({ ...ADMIN, DATABASE_URL: 'sqlite:data/app.db' }, project);

    const [script] = blocksAfter(readme, 'start-run');
    const host = new URL(server.url).host;
    const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script.replaceAll('localhost:3000', host)}`], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const [created, listed] = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(created).toMatchObject({ title: 'Dune', pages: 412, genre: 'fiction' });
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(listed).toEqual({ totalCount: 1, titles: ['Dune'] });
    expect(readme).toContain('`{"totalCount":1,"titles":["Dune"]}`');
  });
});
