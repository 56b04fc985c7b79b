import { describe, expect, it } from 'vitest';
import { signSession, verifySession } from './sessionToken.js';

const USER = 'a'.repeat(24);
const DAY = 86_400_000;

describe('session tokens', () => {
  it('verifies its own tokens, again from memory, and still checks age every time', () => {
    const issued = 1_700_000_000_000;
    const token = signSession('secret', USER, issued);
    expect(verifySession('secret', token, issued + 1000, DAY)).toEqual({ userId: USER, issuedAt: issued });
    expect(verifySession('secret', token, issued + 2000, DAY)).toEqual({ userId: USER, issuedAt: issued });
    expect(verifySession('secret', token, issued + DAY + 1, DAY)).toBeUndefined();
    expect(verifySession('secret', token, issued - 120_000, DAY)).toBeUndefined();
  });

  it('refuses a token signed with another secret, even one verified before under its own', () => {
    const token = signSession('old-secret', USER, 1_000);
    expect(verifySession('old-secret', token, 2_000, DAY)).toBeDefined();
    expect(verifySession('new-secret', token, 2_000, DAY)).toBeUndefined();
  });

  it('refuses tampered, unsigned and malformed tokens', () => {
    const token = signSession('secret', USER, 1_000);
    const [id, stamp, signature] = token.split('.');
    expect(verifySession('secret', `${id}.${Number(stamp) + 1}.${signature}`, 2_000, DAY)).toBeUndefined();
    expect(verifySession('secret', `${'b'.repeat(24)}.${stamp}.${signature}`, 2_000, DAY)).toBeUndefined();
    expect(verifySession('secret', `${id}.${stamp}.${signature.slice(0, -1)}x`, 2_000, DAY)).toBeUndefined();
    for (const bad of [USER, `${id}.${stamp}`, '', 'a.b.c', `${id}.${stamp}.${signature}.x`])
      expect(verifySession('secret', bad, 2_000, DAY)).toBeUndefined();
  });
});
