import type { Logger } from 'pino';
import type { Caller } from './access/caller.js';
import type { FieldCipher } from './crypto/fieldCipher.js';
import type { Secrets } from './crypto/secrets.js';
import type { Registry } from './defineRegistry.js';
import type { Doc, Store } from './store/types.js';

/**
 * What an entity adds to its writes: checks and values after validation and before the store,
 * and side effects after a delete. Features register theirs from their own folders; the
 * operations only ask the context for the entity's rules and never name a collection.
 */
export interface EntityRules {
  beforeCreate?(ctx: RuntimeContext, caller: Caller, values: Record<string, unknown>): Promise<void>;
  beforeUpdate?(ctx: RuntimeContext, caller: Caller, current: Doc, values: Record<string, unknown>): Promise<void>;
  /** After a delete committed, with the record as it was. */
  afterRemove?(doc: Doc): void;
}

/** Rules by entity plural, as the server composed them. */
export type EntityRulesTable = ReadonlyMap<string, EntityRules>;

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
