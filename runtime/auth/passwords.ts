import { hash, verify } from '@node-rs/argon2';

/** argon2id at OWASP's minimum: 19 MiB, 2 passes, 1 lane. */
const ARGON2ID = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
export const MAX_PASSWORD_LENGTH = 1024;

export interface PasswordPolicy {
  minLength: number;
  requireSpecial: boolean;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2ID);
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks a password; with no stored hash (unknown user, LDAP user) it still verifies against
 * a dummy hash, so both failures take the same time.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  dummyHash ??= hashPassword('entigen-dummy-password');
  const target = typeof stored === 'string' && stored.startsWith('$argon2') ? stored : await dummyHash;
  const ok = await verify(target, password).catch(() => false);
  return ok && target === stored;
}

/** The policy's complaint about a password, or undefined when it is acceptable. */
export function passwordProblem(password: unknown, policy: PasswordPolicy): string | undefined {
  if (typeof password !== 'string') return 'must be a string';
  if (password.length < policy.minLength) return `must be at least ${policy.minLength} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (policy.requireSpecial && !/[^A-Za-z0-9]/.test(password)) return 'must contain a special character';
  return undefined;
}
