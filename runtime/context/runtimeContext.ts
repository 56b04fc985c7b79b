import type { Logger } from 'pino';
import type { FieldCipher } from '../crypto/fieldCipher.js';
import type { Secrets } from '../crypto/secrets.js';
import type { MediaFiles } from '../files/mediaFiles.js';
import type { Doc, Store } from '../store/types.js';
import type { Caller } from './caller.js';
import type { Registry } from './defineRegistry.js';
import type { HookTable, WriteOrigin } from './hookTypes.js';

/**
 * What an entity adds to its writes: checks and values after validation and before the store,
 * and side effects after a delete. Features register theirs from their own folders; the
 * operations only ask the context for the entity's rules and never name a collection.
 */
export interface EntityRules {
  beforeCreate?(ctx: RuntimeContext, caller: Caller, values: Record<string, unknown>): Promise<void>;
  beforeUpdate?(ctx: RuntimeContext, caller: Caller, current: Doc, values: Record<string, unknown>): Promise<void>;
  /** Before a delete, with the record as it is: may refuse. */
  beforeRemove?(ctx: RuntimeContext, caller: Caller, current: Doc): Promise<void>;
  /** After a delete committed, with the record as it was. */
  afterRemove?(doc: Doc): void;
}

/** Rules by entity plural, as the server composed them. */
export type EntityRulesTable = ReadonlyMap<string, EntityRules>;

/** Where repositories handed to a hook write: the transaction (ctx.store), who asked, how deep. */
export interface RepositoryScope {
  ctx: RuntimeContext;
  /** Where the write came from (hooks are told). */
  origin: WriteOrigin;
  caller: Caller;
  now: Date;
  depth: number;
  /** The entities whose hooks led to this write, outermost first. */
  path: readonly string[];
}

/** What every operation may use. Built once at start; the same for HTTP, jobs and tests. */
export interface RuntimeContext {
  registry: Registry;
  store: Store;
  secrets: Secrets;
  cipher: FieldCipher;
  logger: Logger;
  /** Each entity's rules (features register theirs; application hooks will too). */
  rules: EntityRulesTable;
  /** The application's hooks by entity (hooks/<plural>.ts, wired by entigen build). */
  hooks: HookTable;
  /** Typed repositories writing in a scope's transaction and running hooks (from generated/index.ts). */
  repositoriesFor?(scope: RepositoryScope): unknown;
  /** Tells the event dispatcher that something committed (it also polls). */
  notifyCommitted?(entity?: string): void;
  /** A session, API key or account ended or changed here: realtime streams check their credentials now. */
  notifyCredentialsChanged?(): void;
  /** The media feature's files (where uploads live, thumbnails), when the app has media assets. */
  media?: MediaFiles;
  /** Injected so tests can move time. */
  now(): Date;
  /** Where the writes made with this context come from: `http` unless a batch, an import or MCP says so. */
  origin?: WriteOrigin;
}
