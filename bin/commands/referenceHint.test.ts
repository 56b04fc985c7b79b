import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { referenceHint } from './referenceHint.js';

describe('reference hints of failures', () => {
  it('points a wrong environment variable at its group of the environment reference', () => {
    const hint = referenceHint('PORT must be an integer from 0 to 65535, not abc')!;
    expect(hint).toMatch(/docs\/reference\/environment\.md#server$/);
    const [file, anchor] = hint.split('#');
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('### Server');
    expect(anchor).toBe('server');
    expect(referenceHint('CLUSTER_MAX_STALENESS (cluster.maxStaleness) must be from 50ms to 1m, not "5"')).toMatch(
      /environment\.md#many-instances$/,
    );
  });

  it('points a wrong config key at the config reference, and says nothing for other failures', () => {
    expect(referenceHint('auth.oidc google: the issuer must be https://')).toMatch(/docs\/reference\/config\.md#keys$/);
    expect(referenceHint('cannot open SQLite database /x: permission denied')).toBeUndefined();
  });
});
