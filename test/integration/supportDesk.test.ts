import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../support/cli.js';
import { type SpawnedServer, spawnServer } from '../support/spawnServer.js';

// The README's support desk recipe as written: its files, built and served, then its commands.
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const blocksAfter = (marker: string): string[] =>
  [...readme.matchAll(new RegExp(`<!-- ${marker}(?:: ([^ ]+))? -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (m) => (m[1] ? `${m[1]}\n${m[2]}` : m[2]),
  );
const ADMIN = { ENTIGEN_ADMIN_EMAIL: 'admin@example.com', ENTIGEN_ADMIN_PASSWORD: 'change me, please!' };

describe('the support desk recipe: an application made of files only', () => {
  let server: SpawnedServer | undefined;
  afterAll(() => server?.child.kill('SIGKILL'));

  it('builds from its files, and an agent sees exactly its tickets and their comments', async () => {
    const project = join(mkdtempSync(join(tmpdir(), 'entigen-desk-')), 'desk');
    expect((await runCli(['init', project], repoRoot)).status).toBe(0);
    // Only the desk: the scaffold's notes go.
    for (const scaffold of ['entities/notes.yaml', 'hooks/notes.ts', 'client-example.mts'])
      rmSync(join(project, scaffold));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(repoRoot, join(project, 'node_modules', 'entigen'), 'dir');
    const files = blocksAfter('desk-file');
    expect(files.map((block) => block.split('\n')[0])).toEqual([
      'entities/customers.yaml',
      'entities/tickets.yaml',
      'entities/comments.yaml',
      'entigen.config.yaml',
      'hooks/tickets.ts',
      'jobs/handlers.ts',
    ]);
    for (const block of files) {
      const [path, ...lines] = block.split('\n');
      mkdirSync(dirname(join(project, path)), { recursive: true });
      writeFileSync(join(project, path), lines.join('\n'));
    }
    const built = await runCli(['build'], project);
    expect(built.stderr).toBe('');
    server = await spawnServer({ ...ADMIN, DATABASE_URL: 'sqlite:data/desk.db' }, project);

    const [script] = blocksAfter('desk-run');
    const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {
      env: { ...process.env, BASE: server.url },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      '{"totalCount":1,"subjects":["Printer on fire"]}',
      '{"totalCount":1,"mine":true}',
      'ticket of another agent: 404',
      '{"slaDueAt":"is not allowed"}',
      '{"sla":true}',
      '{"handler":"closeResolved","origin":"file"}',
    ]);
  });

  it('refuses a schedule whose handler the handlers module does not export, at build time', async () => {
    const project = mkdtempSync(join(tmpdir(), 'entigen-desk-typo-'));
    mkdirSync(join(project, 'entities'));
    mkdirSync(join(project, 'jobs'));
    writeFileSync(
      join(project, 'entities', 'tickets.yaml'),
      'version: 1\nname: Ticket\nplural: tickets\nfields:\n  subject: { type: string }\n',
    );
    writeFileSync(join(project, 'jobs', 'handlers.ts'), 'export async function closeResolved() {}\n');
    writeFileSync(
      join(project, 'entigen.config.yaml'),
      'version: 1\njobs:\n  handlers: ./jobs/handlers.ts\n  schedules:\n    nightly: { handler: closeResolvd, cron: "0 2 * * *" }\n',
    );
    const built = await runCli(['build'], project);
    expect(built.status).toBe(1);
    expect(built.stderr).toContain(
      'entigen.config.yaml:5:25 jobs.schedules.nightly.handler: "closeResolvd" is not exported by ./jobs/handlers.ts (exports: closeResolved)',
    );
    expect(built.stderr).toContain('1 problem in entigen.config.yaml; nothing written');
  });
});
