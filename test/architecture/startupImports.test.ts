import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { sourceFiles } from './importGraph.js';

/**
 * Libraries only some servers use, loaded where they are first needed: a server that sends no
 * mail, signs in through no LDAP or OpenID provider and takes no backup never holds their code.
 */
const LOADED_ON_FIRST_USE = ['nodemailer', 'ldapts', 'openid-client', 'qrcode', 'csv-parse', 'tar-stream'];

describe('the runtime at start', () => {
  it('imports the libraries of optional features only where they are first used', () => {
    const eager = sourceFiles(repoRoot, ['runtime']).flatMap((file) => {
      const text = readFileSync(join(repoRoot, file), 'utf8');
      return [...text.matchAll(/(?:^|\n)\s*import\s+(?!type\s)[^'"]*?from\s+['"]([^'"]+)['"]/g)]
        .map((match) => match[1])
        .filter((specifier) =>
          LOADED_ON_FIRST_USE.some((name) => specifier === name || specifier.startsWith(`${name}/`)),
        )
        .map((specifier) => `${file} imports ${specifier}`);
    });
    expect(eager).toEqual([]);
    // The check reads the files it means to: the libraries are still in use, loaded on demand.
    const runtime = sourceFiles(repoRoot, ['runtime'])
      .map((file) => readFileSync(join(repoRoot, file), 'utf8'))
      .join('\n');
    for (const name of LOADED_ON_FIRST_USE) expect(runtime).toContain(`import('${name}')`);
  });

  it("takes TypeBox's values from the one module the build bundles, and only types from the package", () => {
    const direct = sourceFiles(repoRoot, ['runtime', 'generator', 'bin']).filter((file) => {
      if (file === 'runtime/api/typebox.ts') return false;
      const text = readFileSync(join(repoRoot, file), 'utf8');
      return /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s+['"]@sinclair\/typebox/.test(text);
    });
    expect(direct).toEqual([]);
    expect(readFileSync(join(repoRoot, 'runtime/api/typebox.ts'), 'utf8')).toContain("from '@sinclair/typebox'");
  });
});
