import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('jobs in files: the handlers module', () => {
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
