import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listFiles } from './compareOutput.js';
import { OutputWriter, writeChanged } from './writeOutput.js';

function outputFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'entigen-output-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('OutputWriter', () => {
  it('writes in parts, counts what another thread wrote, and removes what the build no longer makes', () => {
    const dir = outputFolder({ 'metadata.json': '{}', 'a/same.ts': 'same', 'a/old.ts': 'old', 'gone.ts': 'x' });
    const writer = new OutputWriter(dir);
    writer.write(new Map([['a/same.ts', 'same']]));
    // Another thread writes b/ through the target, then reports.
    const theirs: [string, string][] = [['b/new.js', 'new']];
    writer.adopt(['b/new.js'], writeChanged(writer.target, theirs));
    const all = new Map([
      ['metadata.json', '{"v":1}'],
      ['a/same.ts', 'same'],
      ['a/old.ts', 'changed'],
      ['b/new.js', 'new'],
    ]);
    // Files already handled are not written twice, even when finish is given them again.
    writeFileSync(join(dir, 'b/new.js'), 'touched after');
    expect(writer.finish(all)).toEqual({
      written: ['a/old.ts', 'b/new.js', 'metadata.json'],
      unchanged: 1,
      removed: ['gone.ts'],
    });
    expect(listFiles(dir)).toEqual(['a/old.ts', 'a/same.ts', 'b/new.js', 'metadata.json']);
    expect(readFileSync(join(dir, 'a/old.ts'), 'utf8')).toBe('changed');
    expect(readFileSync(join(dir, 'b/new.js'), 'utf8')).toBe('touched after');
  });

  it('refuses a folder build did not write before it writes anything', () => {
    const dir = outputFolder({ 'notes.txt': 'mine' });
    expect(() => new OutputWriter(dir)).toThrow(/no metadata.json: not an entigen output folder/);
    expect(listFiles(dir)).toEqual(['notes.txt']);
  });

  it('starts an empty or missing folder', () => {
    const dir = join(outputFolder({}), 'generated');
    const summary = new OutputWriter(dir).finish(new Map([['metadata.json', '{}']]));
    expect(summary).toEqual({ written: ['metadata.json'], unchanged: 0, removed: [] });
  });
});
