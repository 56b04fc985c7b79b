import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../errors/apiError.js';

const VERSION = 'v1';
/** What API responses show in place of a stored encrypted value. */
export const ENCRYPTED_PLACEHOLDER = '[ENCRYPTED]';

/** AES-256-GCM for encryptedKey fields, a fresh 96-bit nonce per write: `v1.<nonce>.<tag>.<ciphertext>`. */
export class FieldCipher {
  private readonly key?: Buffer;

  constructor(secret: string | undefined) {
    // Any secret string becomes a 256-bit key; a 32-byte base64 key is used as it is.
    if (secret)
      this.key = /^[A-Za-z0-9+/_-]{43}=?$/.test(secret)
        ? Buffer.from(secret, 'base64url')
        : createHash('sha256').update(secret).digest();
  }

  encrypt(plain: string): string {
    const key = this.requireKey();
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [
      VERSION,
      nonce.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  decrypt(stored: string): string {
    const key = this.requireKey();
    const [version, nonce, tag, body] = stored.split('.');
    if (version !== VERSION || !nonce || !tag || body === undefined)
      throw new ApiError('INTERNAL_ERROR', 'An encrypted value is corrupt');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new ApiError('INTERNAL_ERROR', 'An encrypted value failed its integrity check');
    }
  }

  private requireKey(): Buffer {
    if (!this.key)
      throw new ApiError('INTERNAL_ERROR', 'APP_ENCRYPTION_KEY is not set: encrypted fields cannot be written or read');
    return this.key;
  }
}
