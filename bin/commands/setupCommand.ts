import { resolve } from 'node:path';
import { pino } from 'pino';
import type { PasswordPolicy } from '../../runtime/auth/passwords.js';
import { createFirstAdmin, recoverAdmin } from '../../runtime/auth/setup.js';
import type { RuntimeContext } from '../../runtime/context/runtimeContext.js';
import { FieldCipher } from '../../runtime/crypto/fieldCipher.js';
import { featureRules } from '../../runtime/server/features.js';
import { loadCheckedConfig } from './checkConfigFile.js';
import { openCommandStore } from './commandContext.js';
import { reportFailure } from './reportFailure.js';
import { loadRegistry } from './serveCommand.js';

export interface SetupOptions {
  email: string;
  password: string;
  name: string;
  tenant?: string;
  out: string;
}

/** `entigen setup`: the first admin without the browser, on the store DATABASE_URL names. */
export async function setupCommand(options: SetupOptions): Promise<void> {
  await withStore(options.out, async (ctx, policy) => {
    const admin = await createFirstAdmin(ctx, policy, {
      email: options.email,
      password: options.password,
      name: options.name,
      tenantName: options.tenant ?? 'Default',
    });
    process.stdout.write(`entigen: created administrator ${admin.email} (${admin.id})\n`);
  });
}

/** `entigen recover-admin`: an enabled local ADMIN with this email and password, whatever locked the admins out. */
export async function recoverAdminCommand(options: Omit<SetupOptions, 'tenant'>): Promise<void> {
  await withStore(options.out, async (ctx, policy) => {
    const { user, created } = await recoverAdmin(ctx, policy, {
      email: options.email,
      password: options.password,
      name: options.name,
    });
    process.stdout.write(
      created
        ? `entigen: created administrator ${user.email} (${user.id})\n`
        : `entigen: ${user.email} (${user.id}) is an enabled local administrator with the new password; its earlier sessions ended\n`,
    );
  });
}

async function withStore(
  out: string,
  run: (ctx: RuntimeContext, policy: PasswordPolicy) => Promise<void>,
): Promise<void> {
  try {
    const root = resolve('.');
    const config = loadCheckedConfig(root, 'nothing changed', process.env);
    const registry = await loadRegistry(root, out);
    const store = await openCommandStore(root, registry.model);
    await store.init(registry.model);
    try {
      const logger = pino({ level: 'warn' });
      await run(
        {
          registry,
          store,
          logger,
          now: () => new Date(),
          secrets: { signing: '' },
          cipher: new FieldCipher(undefined),
          rules: featureRules(registry.model),
          hooks: registry.hooks ?? new Map(),
        },
        config.passwordPolicy,
      );
    } finally {
      await store.close();
    }
  } catch (error) {
    const details = (error as { details?: Record<string, string> }).details;
    if (details)
      for (const [field, message] of Object.entries(details)) process.stderr.write(`entigen: ${field} ${message}\n`);
    reportFailure(error);
  }
}
