import type { AppModel } from '../model/types.js';
import type { CountCache } from './countCache.js';
import type { StoreObserver } from './measuredStore.js';
import type { Store } from './types.js';

export interface StoreStack {
  /** The store as DATABASE_URL opened it (what only its own kind offers: commit statistics, LISTEN). */
  opened: Store;
  /**
   * The store every operation uses: counts remembered where writes can be heard, measured,
   * localized fields folded into one object per record, and trashed records out of sight.
   */
  store: Store;
  countCache?: CountCache;
  /** MongoDB: the deployment has change streams, through which a server hears every writer. */
  changeStreams?: boolean;
}

export interface AppStoreOptions {
  databaseUrl: string | undefined;
  root: string;
  model: AppModel;
  env: NodeJS.ProcessEnv;
  /**
   * A server, with a bus between instances: it remembers where every write can be heard, and tells
   * the other instances of its own writes. Otherwise (a CLI command) it remembers only on the
   * embedded store, whose file tells of every other process's commit, and its writes on
   * PostgreSQL are told by the database's change triggers.
   */
  server: boolean;
  /** An opened store to use instead of DATABASE_URL's (embedding, tests). */
  opened?: Store;
  observe?: StoreObserver;
}

/** The kind of store DATABASE_URL names, before anything is opened. */
export function storeKindOf(databaseUrl: string | undefined): Store['kind'] {
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) return 'postgres';
  if (databaseUrl && /^mongodb(\+srv)?:\/\//.test(databaseUrl)) return 'mongo';
  return 'sqlite';
}

/**
 * Whether a count cache may remember: where every write can be heard. The embedded store (other
 * processes' commits show in PRAGMA data_version); for a server, PostgreSQL (the instances tell
 * each other of their writes, the change triggers of everyone else's) or MongoDB whose deployment
 * has change streams (a replica set or a sharded cluster). ENTIGEN_COUNT_CACHE=off turns it off; =on turns it on for a single server that is the
 * only writer of a MongoDB database without change streams.
 */
export function remembers(
  env: NodeJS.ProcessEnv,
  kind: Store['kind'],
  server: boolean,
  changeStreams = false,
): boolean {
  if (env.ENTIGEN_COUNT_CACHE === 'off') return false;
  if (kind === 'sqlite') return true;
  if (!server) return false;
  if (env.ENTIGEN_COUNT_CACHE === 'on') return true;
  return kind === 'postgres' || (kind === 'mongo' && changeStreams);
}
