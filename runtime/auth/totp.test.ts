import { describe, expect, it } from 'vitest';
import { matchingStep, newRecoveryCodes, normalizeRecoveryCode, otpauthUri, totpCode } from './totp.js';

// RFC 6238, appendix B: the SHA-1 seed "12345678901234567890", in base32.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('TOTP', () => {
  it('computes the RFC 6238 test vectors (their last six digits)', () => {
    expect(totpCode(RFC_SECRET, 59_000)).toBe('287082');
    expect(totpCode(RFC_SECRET, 1_111_111_109_000)).toBe('081804');
    expect(totpCode(RFC_SECRET, 2_000_000_000_000)).toBe('279037');
  });

  it('accepts the current step and one either side, and says which step matched', () => {
    const now = 1_111_111_109_000;
    const step = Math.floor(now / 30_000);
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, now), now)).toBe(step);
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, now - 30_000), now)).toBe(step - 1);
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, now + 30_000), now)).toBe(step + 1);
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, now + 60_000), now)).toBeUndefined();
    for (const bad of ['', '12345', '1234567', 'abcdef', ' 081804'])
      expect(matchingStep(RFC_SECRET, bad, now)).toBeUndefined();
  });

  it('writes the otpauth URI authenticator apps read', () => {
    const uri = new URL(otpauthUri(RFC_SECRET, 'My App', 'ada@example.test'));
    expect(uri.href.startsWith('otpauth://totp/My%20App:ada%40example.test?')).toBe(true);
    expect(uri.searchParams.get('secret')).toBe(RFC_SECRET);
  });

  it('makes ten distinct recovery codes of ten characters, compared without case or dash', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect(normalizeRecoveryCode(' AbCdE-fGhJk ')).toBe('abcdefghjk');
  });
});
