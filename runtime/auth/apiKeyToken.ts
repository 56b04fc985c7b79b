import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'egk_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_CHARS = 40;

/** `egk_` + 40 random base62 characters (about 238 bits). */
export function newApiKeyToken(): string {
  let out = '';
  while (out.length < TOKEN_CHARS) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 * 62: bytes above it are dropped so every character is equally likely.
      if (byte < 248 && out.length < TOKEN_CHARS) out += ALPHABET[byte % 62];
    }
  }
  return `${API_KEY_PREFIX}${out}`;
}

/** Tokens (API keys, sessions, reset tokens) are stored only as their SHA-256. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What a key list shows: the prefix, a mask, and the last eight characters. */
export function maskToken(token: string): string {
  return `${API_KEY_PREFIX}****${token.slice(-8)}`;
}
