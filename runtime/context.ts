import type { Logger } from 'pino';
import type { FieldCipher } from './crypto/fieldCipher.js';
import type { Secrets } from './crypto/secrets.js';
import type { Registry } from './defineRegistry.js';
import type { EntityRulesTable } from './entities/entityRules.js';
import type { Store } from './store/types.js';

/** What every operation may use. Built once at start; the same for HTTP, jobs and tests. */
export interface RuntimeContext {
  registry: Registry;
  store: Store;
  secrets: Secrets;
  cipher: FieldCipher;
  logger: Logger;
  /** Each entity's rules (features register theirs; application hooks will too). */
  rules: EntityRulesTable;
  /** Injected so tests can move time. */
  now(): Date;
}
