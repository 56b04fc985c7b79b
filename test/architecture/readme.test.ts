import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';

describe('the README', () => {
  it('fits in 150 lines, with the quick start first', () => {
    const text = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(150);
    const headings = text.split('\n').filter((line) => line.startsWith('## '));
    expect(headings[0]).toBe('## Quick start');
  });
});
