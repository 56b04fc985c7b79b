import { pino } from 'pino';
import type { Registry } from '../../runtime/context/defineRegistry.js';
import type { RuntimeContext } from '../../runtime/context/runtimeContext.js';
import { FieldCipher } from '../../runtime/crypto/fieldCipher.js';
import type { AppModel } from '../../runtime/model/types.js';
import { openAppStore } from '../../runtime/server/appStore.js';
import { featureRules } from '../../runtime/server/features.js';
import type { Store } from '../../runtime/store/types.js';
import { ensureEventSequence } from '../../runtime/write/eventLog.js';

/**
 * The store DATABASE_URL names, as the server stacks it (localized fields, the trash out of
 * sight, counts remembered only where another process's commits can be heard); its writes reach
 * the running servers as everyone's do (on PostgreSQL, through the tables' change triggers).
 */
export async function openCommandStore(root: string, model: AppModel): Promise<Store> {
  return (await openAppStore({ databaseUrl: process.env.DATABASE_URL, root, model, env: process.env, server: false }))
    .store;
}

/**
 * The runtime context of a command that writes records outside the server (migrate, import):
 * the store prepared for the model and the event log, the feature rules, the app's hooks, no
 * logger. Encrypted fields use APP_ENCRYPTION_KEY, as the server does.
 */
export async function commandContext(registry: Registry, store: Store, signing: string): Promise<RuntimeContext> {
  await store.init(registry.model);
  await ensureEventSequence(store);
  return {
    registry,
    store,
    secrets: { signing },
    cipher: new FieldCipher(process.env.APP_ENCRYPTION_KEY),
    logger: pino({ level: 'silent' }),
    rules: featureRules(registry.model),
    hooks: registry.hooks ?? new Map(),
    now: () => new Date(),
  };
}
