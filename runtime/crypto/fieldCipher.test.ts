import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors/apiError.js';
import { FieldCipher } from './fieldCipher.js';

describe('FieldCipher', () => {
  it('round-trips with a fresh nonce each time', () => {
    const cipher = new FieldCipher('a secret');
    const a = cipher.encrypt('token-123');
    const b = cipher.encrypt('token-123');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\./);
    expect(cipher.decrypt(a)).toBe('token-123');
  });

  it('refuses a tampered ciphertext or another key with an error, never garbage', () => {
    const cipher = new FieldCipher('a secret');
    const sealed = cipher.encrypt('token-123');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('forged').toString('base64url');
    expect(() => cipher.decrypt(parts.join('.'))).toThrow(/integrity/);
    expect(() => new FieldCipher('other').decrypt(sealed)).toThrow(ApiError);
    expect(() => cipher.decrypt('not-a-value')).toThrow(/corrupt/);
  });

  it('says plainly when no key is configured', () => {
    expect(() => new FieldCipher(undefined).encrypt('x')).toThrow(/APP_ENCRYPTION_KEY is not set/);
  });
});
