import { describe, expect, it } from 'vitest';
import { escapeFilterValue } from './ldap.js';

describe('escapeFilterValue (RFC 4515)', () => {
  it('hex-escapes *, (, ), backslash and NUL, and nothing else', () => {
    expect(escapeFilterValue('a*b(c)d\\e\u0000f')).toBe('a\\2ab\\28c\\29d\\5ce\\00f');
    expect(escapeFilterValue('alice@example.org')).toBe('alice@example.org');
  });
});
