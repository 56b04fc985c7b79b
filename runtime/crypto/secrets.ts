import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Secrets {
  /** Signs session tokens and cursors: SESSION_SECRET, else APP_ENCRYPTION_KEY. */
  signing: string;
  /** Encrypts encryptedKey fields: APP_ENCRYPTION_KEY; undefined when not configured. */
  encryption?: string;
}

export interface SecretsOptions {
  env: NodeJS.ProcessEnv;
  /** Where development secrets are kept (data/secrets.json). */
  devFile: string;
  warn(message: string): void;
}

/**
 * Secrets from the environment. Outside production, missing ones are generated once into a
 * file readable only by the owner, with a warning; in production the server refuses to start.
 */
export function loadSecrets({ env, devFile, warn }: SecretsOptions): Secrets {
  const fromEnv = {
    signing: env.SESSION_SECRET || env.APP_ENCRYPTION_KEY,
    encryption: env.APP_ENCRYPTION_KEY || undefined,
  };
  if (fromEnv.signing) return { signing: fromEnv.signing, encryption: fromEnv.encryption };
  if (env.NODE_ENV === 'production') {
    throw new Error('SESSION_SECRET or APP_ENCRYPTION_KEY must be set in production');
  }
  let stored: { sessionSecret: string; encryptionKey: string };
  if (existsSync(devFile)) {
    stored = JSON.parse(readFileSync(devFile, 'utf8'));
  } else {
    stored = {
      sessionSecret: randomBytes(32).toString('base64url'),
      encryptionKey: randomBytes(32).toString('base64url'),
    };
    mkdirSync(dirname(devFile), { recursive: true });
    writeFileSync(devFile, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    chmodSync(devFile, 0o600);
    warn(`no SESSION_SECRET or APP_ENCRYPTION_KEY set: generated development secrets in ${devFile}`);
  }
  return { signing: stored.sessionSecret, encryption: fromEnv.encryption ?? stored.encryptionKey };
}
