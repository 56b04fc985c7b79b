import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../model/packageRoot.js';
import { ERROR_CODES } from './apiError.js';

/** The reference's error code table: code -> status. */
function documentedCodes(): Map<string, number> {
  const section = readFileSync(join(packageRoot, 'docs', 'reference', 'errors.md'), 'utf8');
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| code |')));
  const rows = [...table.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)];
  return new Map(rows.map(([, code, status]) => [code, Number(status)]));
}

describe('error codes', () => {
  it('the reference documents every code of the registry, with its status, and no other', () => {
    const registry = new Map(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]));
    expect(Object.fromEntries(documentedCodes())).toEqual(Object.fromEntries(registry));
  });
});
