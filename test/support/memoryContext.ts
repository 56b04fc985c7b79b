import pino from 'pino';
import { registry } from '../../generated/index.js';
import { RoleTable } from '../../runtime/access/roleTable.js';
import { callerForUser } from '../../runtime/auth/resolveCaller.js';
import type { Caller } from '../../runtime/context/caller.js';
import type { RuntimeContext } from '../../runtime/context/runtimeContext.js';
import { FieldCipher } from '../../runtime/crypto/fieldCipher.js';
import { USERS } from '../../runtime/model/collections.js';
import { featureRules } from '../../runtime/server/features.js';
import { SqliteStore } from '../../runtime/store/sqlite/sqliteStore.js';
import { ensureEventSequence } from '../../runtime/write/eventLog.js';
import { newId } from '../../runtime/write/prepareWrite.js';

export interface MemoryContext {
  ctx: RuntimeContext;
  roles: RoleTable;
  /** Moves the context's clock. */
  setNow(iso: string): void;
  /** A stored user with these roles, as a caller. */
  userCaller(roles: string[], email?: string): Promise<Caller>;
  anonymous(): Promise<Caller>;
  close(): Promise<void>;
}

/**
 * The example app's registry over an in-memory SQLite store, with the composed feature rules,
 * a fixed clock and a silent logger: what a server gives an operation, without HTTP.
 */
export async function memoryContext(start = '2026-01-01T00:00:00.000Z'): Promise<MemoryContext> {
  const store = SqliteStore.open(':memory:');
  await store.init(registry.model);
  await ensureEventSequence(store);
  let now = new Date(start);
  const ctx: RuntimeContext = {
    registry,
    store,
    secrets: { signing: 'unit-test-signing-secret', encryption: 'unit-test-encryption-key' },
    cipher: new FieldCipher('unit-test-encryption-key'),
    logger: pino({ level: 'silent' }),
    rules: featureRules(registry.model),
    hooks: registry.hooks,
    now: () => now,
  };
  const roles = new RoleTable(registry.model, store);
  let users = 0;
  return {
    ctx,
    roles,
    setNow: (iso) => {
      now = new Date(iso);
    },
    async userCaller(keys, email = `user${++users}@example.com`) {
      const at = now.toISOString();
      const user = await store.insert(USERS, {
        id: newId(),
        email,
        displayName: email.split('@')[0],
        roles: keys,
        authSource: 'local',
        disabled: false,
        createdAt: at,
        updatedAt: at,
      });
      return callerForUser(user, roles);
    },
    anonymous: async () => ({ roles: ['ANONYMOUS'], permissions: await roles.permissionsOf([]), isAdmin: false }),
    close: () => store.close(),
  };
}
