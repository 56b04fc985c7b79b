import { describe, expect, it } from 'vitest';
import { scanHookModule } from './scanHookModule.js';

describe('scanHookModule', () => {
  it('finds the entity and every top-level hook name with its position', () => {
    const text = [
      "import { defineHooks, reject } from '../generated/hooks.js';",
      '// defineHooks("comments", { nope })',
      "export default defineHooks('orders', {",
      '  async beforeCreate({ data, repositories }) {',
      // A template literal with braces inside its placeholder.
      `    const note = \`a \${data.quantity > 1 ? '{' : '}'} b\`;`,
      "    if (!data) reject('CONFLICT', 'x', { quantity: '}' });",
      '    return { ...data };',
      '  },',
      '  beforeUpdate: ({ data }) => ({ ...data, extra: { nested: [1, 2] } }),',
      "  'afterCommit': async () => {},",
      '  beforeDelete,',
      '  endpoints: { approve: async () => ({}) },',
      '});',
    ].join('\n');
    const scanned = scanHookModule(text);
    expect(scanned.plural).toEqual({ value: 'orders', line: 3, col: 28 });
    expect(scanned.keys).toEqual([
      { name: 'beforeCreate', line: 4, col: 9 },
      { name: 'beforeUpdate', line: 9, col: 3 },
      { name: 'afterCommit', line: 10, col: 3 },
      { name: 'beforeDelete', line: 11, col: 3 },
      { name: 'endpoints', line: 12, col: 3 },
    ]);
  });

  it('reports a module that never calls defineHooks, or names no entity', () => {
    expect(scanHookModule('export default {}').call).toBeUndefined();
    expect(scanHookModule('export default defineHooks(name, {})').plural).toBeUndefined();
  });
});
