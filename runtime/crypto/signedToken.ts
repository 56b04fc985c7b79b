import { createHmac, timingSafeEqual } from 'node:crypto';

/** base64url HMAC-SHA256 of `payload` keyed with the secret's UTF-8 bytes. */
export function hmac(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

/** Constant-time comparison of two signatures. */
export function signaturesMatch(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** An opaque, tamper-evident string carrying a small JSON value (list cursors). */
export function sealValue(secret: string, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${hmac(secret, `cursor.${payload}`)}`;
}

export function openSealedValue(secret: string, sealed: string): unknown {
  const [payload, signature, extra] = sealed.split('.');
  if (!payload || !signature || extra !== undefined) return undefined;
  if (!signaturesMatch(hmac(secret, `cursor.${payload}`), signature)) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
