import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { build } from '../../generator/build.js';
import { listFiles } from '../../generator/compareOutput.js';
import { BuildFailure, formatDiagnostic } from '../../generator/diagnostics.js';

// Each case folder holds entities/ (and maybe entigen.config.yaml) plus either expected/
// (the files build writes) or stderr.txt (the problems it reports). UPDATE_GOLDEN=1 rewrites them.
const casesDir = dirname(fileURLToPath(import.meta.url));
const cases = readdirSync(casesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const update = process.env.UPDATE_GOLDEN === '1';

async function run(root: string): Promise<{ files?: Map<string, string>; stderr?: string }> {
  try {
    return { files: (await build({ root })).files };
  } catch (error) {
    if (!(error instanceof BuildFailure)) throw error;
    return { stderr: `${error.diagnostics.map(formatDiagnostic).join('\n')}\n` };
  }
}

describe('golden cases', () => {
  it('has at least 20 error cases and some success cases', () => {
    expect(cases.filter((name) => existsSync(join(casesDir, name, 'stderr.txt'))).length).toBeGreaterThanOrEqual(20);
    expect(cases.filter((name) => existsSync(join(casesDir, name, 'expected'))).length).toBeGreaterThanOrEqual(2);
  });

  for (const name of cases) {
    it(name, async () => {
      const root = join(casesDir, name);
      const result = await run(root);
      const stderrPath = join(root, 'stderr.txt');
      const expectedDir = join(root, 'expected');
      if (update) {
        rmSync(expectedDir, { recursive: true, force: true });
        rmSync(stderrPath, { force: true });
        if (result.stderr !== undefined) writeFileSync(stderrPath, result.stderr);
        for (const [path, text] of result.files ?? []) {
          mkdirSync(dirname(join(expectedDir, path)), { recursive: true });
          writeFileSync(join(expectedDir, path), text);
        }
        return;
      }
      if (existsSync(stderrPath)) {
        expect(result.files, 'build should have failed').toBeUndefined();
        expect(result.stderr).toBe(readFileSync(stderrPath, 'utf8'));
        return;
      }
      expect(result.stderr, 'build should have succeeded').toBeUndefined();
      expect([...result.files!.keys()]).toEqual(listFiles(expectedDir));
      for (const [path, text] of result.files!) expect(text, path).toBe(readFileSync(join(expectedDir, path), 'utf8'));
    });
  }
});
