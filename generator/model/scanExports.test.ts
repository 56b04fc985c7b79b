import { describe, expect, it } from 'vitest';
import { scanExports } from './scanExports.js';

describe('scanExports', () => {
  it('names functions, constants, classes, export lists and default object keys', () => {
    const text = [
      '// export function commented() {}',
      "const label = 'export function inString() {}';",
      'export async function closeResolved({ repositories }) { return { a: 1 }; }',
      'export function* walk() {}',
      'export const remind = async () => undefined;',
      'export class Report {}',
      'function a() {} function b() {}',
      'export { a, b as renamed };',
      'export default { fromDefault, async other() {}, third: () => 1 };',
    ].join('\n');
    const { names, complete } = scanExports(text);
    expect([...names].sort()).toEqual(
      ['Report', 'a', 'closeResolved', 'fromDefault', 'other', 'remind', 'renamed', 'third', 'walk'].sort(),
    );
    expect(complete).toBe(true);
  });

  it('says when it cannot name everything', () => {
    expect(scanExports("export * from './more.js';").complete).toBe(false);
    expect(scanExports('export default handlers;').complete).toBe(false);
  });
});
