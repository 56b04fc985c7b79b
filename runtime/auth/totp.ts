import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as every authenticator app reads it: SHA-1, six digits, 30-second steps. */
const TOTP_SETTINGS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** Codes of the step before and after now are accepted too (clock drift, a code typed at the turn). */
export const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A new 160-bit secret, base32 (what authenticator apps take). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app scans: `<issuer>:<account>` with the secret. */
export function otpauthUri(secret: string, issuer: string, account: string): string {
  return new TOTP({ ...TOTP_SETTINGS, issuer, label: account, secret: Secret.fromBase32(secret) }).toString();
}

/** The URI as a QR code: an SVG data URL an <img> shows without any script. */
export async function qrCodeDataUrl(uri: string): Promise<string> {
  // qrcode is loaded on the first enrolment, not by every server at start.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/**
 * The time step a six-digit code belongs to, if it is the code of the step of `nowMs` or one
 * step either side; undefined otherwise. otpauth compares each candidate in constant time.
 */
export function matchingStep(secret: string, code: string, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = TOTP.validate({
    ...TOTP_SETTINGS,
    token: code,
    secret: Secret.fromBase32(secret),
    timestamp: nowMs,
    window: TOTP_WINDOW,
  });
  return delta === null ? undefined : TOTP.counter({ period: TOTP_SETTINGS.period, timestamp: nowMs }) + delta;
}

/** The code of a step (tests and the docs' examples). */
export function totpCode(secret: string, nowMs: number): string {
  return TOTP.generate({ ...TOTP_SETTINGS, secret: Secret.fromBase32(secret), timestamp: nowMs });
}

/** Ten single-use codes like `k7m2q-x9pwd` (about 50 bits each). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = '';
    while (code.length < 10) {
      // 248 = 8 * 31: bytes above it are dropped so every character is equally likely.
      for (const byte of randomBytes(16)) if (byte < 248 && code.length < 10) code += RECOVERY_ALPHABET[byte % 31];
    }
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** How a recovery code is compared and hashed: lower case, without spaces or dashes. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}
