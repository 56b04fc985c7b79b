import type { AppModel } from '../model/types.js';
import { CountCache, CountCachingStore } from './countCache.js';
import { withLocales } from './localeStore.js';
import { MeasuredStore, type StoreObserver } from './measuredStore.js';
import type { MongoStore } from './mongo/mongoStore.js';
import { openStore } from './openStore.js';
import { withTrash } from './trashStore.js';
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

/**
 * The store stack the server and every CLI command use alike: opened, remembered where that is
 * sound, measured, localized and with the trash out of sight.
 */
export async function openAppStore(options: AppStoreOptions): Promise<StoreStack> {
  const kind = options.opened?.kind ?? storeKindOf(options.databaseUrl);
  // PostgreSQL: a server's writes are announced by the server (the change triggers stay silent for them).
  const announced = options.server && kind === 'postgres' && remembers(options.env, kind, true);
  const opened = options.opened ?? (await openStore(options.databaseUrl, options.root, { announced }));
  // MongoDB: only a deployment with change streams lets a server hear every writer.
  const changeStreams =
    kind === 'mongo' && options.server && 'hasChangeStreams' in opened
      ? await (opened as MongoStore).hasChangeStreams()
      : false;
  const cached = remembers(options.env, kind, options.server, changeStreams);
  const countCache = cached ? new CountCache() : undefined;
  const counted = countCache ? new CountCachingStore(opened, countCache) : opened;
  const measured = options.observe ? new MeasuredStore(counted, options.observe) : counted;
  const store = withTrash(withLocales(measured, options.model), options.model);
  return { opened, store, countCache, ...(changeStreams ? { changeStreams } : {}) };
}
