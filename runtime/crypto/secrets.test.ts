import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSecrets } from './secrets.js';

const devFile = () => join(mkdtempSync(join(tmpdir(), 'entigen-secrets-')), 'data', 'secrets.json');

describe('loadSecrets', () => {
  it('prefers SESSION_SECRET for signing and falls back to APP_ENCRYPTION_KEY', () => {
    expect(
      loadSecrets({ env: { SESSION_SECRET: 's', APP_ENCRYPTION_KEY: 'k' }, devFile: devFile(), warn: () => {} }),
    ).toEqual({ signing: 's', encryption: 'k' });
    expect(loadSecrets({ env: { APP_ENCRYPTION_KEY: 'k' }, devFile: devFile(), warn: () => {} })).toEqual({
      signing: 'k',
      encryption: 'k',
    });
  });

  it('generates development secrets once, readable only by the owner, with a warning', () => {
    const file = devFile();
    const warnings: string[] = [];
    const first = loadSecrets({ env: {}, devFile: file, warn: (m) => warnings.push(m) });
    const second = loadSecrets({ env: {}, devFile: file, warn: (m) => warnings.push(m) });
    expect(second).toEqual(first);
    expect(warnings).toHaveLength(1);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).sessionSecret).toBe(first.signing);
  });

  it('refuses to start in production without a secret', () => {
    expect(() => loadSecrets({ env: { NODE_ENV: 'production' }, devFile: devFile(), warn: () => {} })).toThrow(
      /must be set in production/,
    );
  });
});
