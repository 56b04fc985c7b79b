import { resolve } from 'node:path';
import { pino } from 'pino';
import { createFirstAdmin } from '../../runtime/auth/setup.js';
import { loadRuntimeConfig } from '../../runtime/config/runtimeConfig.js';
import { FieldCipher } from '../../runtime/crypto/fieldCipher.js';
import { openStore } from '../../runtime/store/openStore.js';
import { loadRegistry } from './serveCommand.js';
import { reportFailure } from './reportFailure.js';

export interface SetupOptions {
  email: string;
  password: string;
  name: string;
  tenant?: string;
  out: string;
}

/** `entigen setup`: the first admin without the browser, on the store DATABASE_URL names. */
export async function setupCommand(options: SetupOptions): Promise<void> {
  try {
    const root = resolve('.');
    const registry = await loadRegistry(root, options.out);
    const config = loadRuntimeConfig(root, process.env);
    const store = await openStore(process.env.DATABASE_URL, root);
    await store.init(registry.model);
    try {
      const logger = pino({ level: 'warn' });
      const ctx = { registry, store, logger, now: () => new Date(), secrets: { signing: '' }, cipher: new FieldCipher(undefined) };
      const admin = await createFirstAdmin(ctx, config.passwordPolicy, {
        email: options.email,
        password: options.password,
        name: options.name,
        tenantName: options.tenant ?? 'Default',
      });
      process.stdout.write(`entigen: created administrator ${admin.email} (${admin.id})\n`);
    } finally {
      await store.close();
    }
  } catch (error) {
    const details = (error as { details?: Record<string, string> }).details;
    if (details) for (const [field, message] of Object.entries(details)) process.stderr.write(`entigen: ${field} ${message}\n`);
    reportFailure(error);
  }
}
