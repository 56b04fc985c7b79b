import { CountCache, CountCachingStore } from '../store/countCache.js';
import { MeasuredStore } from '../store/measuredStore.js';
import type { MongoStore } from '../store/mongo/mongoStore.js';
import { openStore } from '../store/openStore.js';
import { type AppStoreOptions, remembers, type StoreStack, storeKindOf } from '../store/storeStack.js';
import { TracedStore } from '../store/tracedStore.js';
import { tracingOn } from '../telemetry/tracing.js';
import { featureStore } from './features.js';

/**
 * The store stack the server and every CLI command use alike: opened, remembered where that is
 * sound, measured, and wrapped by the app's features (localized fields folded, the trash out of
 * sight).
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
  // With traces on, a span around each call that reaches the database (not those the cache answers).
  const traced = tracingOn() ? new TracedStore(opened) : opened;
  const counted = countCache ? new CountCachingStore(traced, countCache) : traced;
  const measured = options.observe ? new MeasuredStore(counted, options.observe) : counted;
  const store = featureStore(measured, options.model);
  return { opened, store, countCache, ...(changeStreams ? { changeStreams } : {}) };
}
