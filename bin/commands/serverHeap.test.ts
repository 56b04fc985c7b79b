import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag, SERVE_ENV, SERVE_NODE_FLAGS } from './serverHeap.js';

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

describe('the node flags and environment of a serving process', () => {
  const flags = SERVE_NODE_FLAGS.join(' ');
  /** SERVE_ENV as a command line writes it (`NAME=value ...`). */
  const SERVE_ENV_ASSIGNMENTS = Object.entries(SERVE_ENV)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');

  it('are on every command line that starts the server', () => {
    expect(SERVE_ENV_ASSIGNMENTS).toBe('MALLOC_ARENA_MAX=2');
    expect(readFileSync('bin/entigen.ts', 'utf8').split('\n')[0]).toBe(
      `#!/usr/bin/env -S ${SERVE_ENV_ASSIGNMENTS} node ${flags}`,
    );
    const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
    expect(scripts.start).toContain(`${SERVE_ENV_ASSIGNMENTS} exec node ${flags} dist/bin/entigen.js serve`);
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const command = SERVE_NODE_FLAGS.map((flag) => `"${flag}", `).join('');
    expect(dockerfile).toContain(`CMD ["node", ${command}"dist/bin/entigen.js", "serve"]`);
    for (const [name, value] of Object.entries(SERVE_ENV)) expect(dockerfile).toContain(`ENV ${name}=${value}\n`);
    const guide = readFileSync('docs/guide/deployment.md', 'utf8');
    expect(guide).toContain(`ExecStart=/usr/bin/node ${flags} node_modules/entigen/dist/bin/entigen.js serve`);
    for (const [name, value] of Object.entries(SERVE_ENV)) expect(guide).toContain(`Environment=${name}=${value}\n`);
  });
});
