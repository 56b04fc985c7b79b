import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../model/packageRoot.js';
import { ENVIRONMENT_VARIABLES } from './environment.js';

/** Every `env.NAME` / `env['NAME']` the product's sources read (tests and benchmarks aside). */
function variablesRead(): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        for (const match of readFileSync(path, 'utf8').matchAll(
          /env(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g,
        ))
          found.set(match[1] ?? match[2], path.slice(packageRoot.length + 1));
      }
    }
  };
  for (const dir of ['runtime', 'bin', 'generator']) visit(join(packageRoot, dir));
  return found;
}

describe('environment variables', () => {
  it('lists every variable the code reads, and none it does not', () => {
    const read = variablesRead();
    const listed = new Set(ENVIRONMENT_VARIABLES.map((v) => v.name));
    const unlisted = [...read].filter(([name]) => !listed.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(unlisted).toEqual([]);
    // OIDC_<NAME>_CLIENT_SECRET is read by a name made from the provider's.
    const unread = [...listed].filter((name) => !read.has(name) && !name.includes('<'));
    expect(unread).toEqual([]);
  });

  it('describes each once', () => {
    const names = ENVIRONMENT_VARIABLES.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const variable of ENVIRONMENT_VARIABLES)
      expect(variable.description.length, variable.name).toBeGreaterThan(10);
  });
});
