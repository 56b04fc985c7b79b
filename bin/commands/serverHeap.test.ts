import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag, SERVE_NODE_FLAGS } from './serverHeap.js';

describe('heapGrowthFlag', () => {
  it('bounds the growth when node was given no growth of its own', () => {
    expect(heapGrowthFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowthFlag(['--max-semi-space-size=8', '--enable-source-maps'])).toBe('--heap-growing-percent=50');
  });

  it('leaves a growth chosen on the node command line alone, in either spelling', () => {
    expect(heapGrowthFlag(['--heap-growing-percent=200'])).toBeUndefined();
    expect(heapGrowthFlag(['--heap_growing_percent=10'])).toBeUndefined();
  });
});

describe('the node flags of a serving process', () => {
  const flags = SERVE_NODE_FLAGS.join(' ');

  it('are on every command line that starts the server', () => {
    expect(readFileSync('bin/entigen.ts', 'utf8').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${flags}`);
    const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
    expect(scripts.start).toContain(`node ${flags} dist/bin/entigen.js serve`);
    const command = SERVE_NODE_FLAGS.map((flag) => `"${flag}", `).join('');
    expect(readFileSync('Dockerfile', 'utf8')).toContain(`CMD ["node", ${command}"dist/bin/entigen.js", "serve"]`);
  });
});
