import type { RoleTable } from '../../access/roleTable.js';
import { callerForUser } from '../../auth/resolveCaller.js';
import type { Caller } from '../../context/caller.js';
import { LogFeed } from '../../events/logFeed.js';
import { RealtimeHub } from '../../events/realtime/realtimeHub.js';
import { API_KEYS, REVOKED_SESSIONS, ROLES, USERS } from '../../model/collections.js';
import { CHANGED_TOPIC } from '../../store/postgres/changeNotices.js';
import type { Store } from '../../store/types.js';
import { detached } from '../../telemetry/tracing.js';
import { FeatureWorks, featuresOf } from '../features.js';
import type { Base } from './base.js';
import type { Cluster } from './cluster.js';
import type { Services } from './services.js';
import type { Stores } from './store.js';

/** Collections whose change may end a stream's credential. */
const CREDENTIALS = new Set([USERS, REVOKED_SESSIONS, API_KEYS, ROLES]);

export interface EventConsumers {
  /** This instance's one reader of the event log. */
  feed: LogFeed;
  /** The open realtime streams. */
  realtime: RealtimeHub;
  /** The features' work (afterCommit hooks, webhooks), started. */
  works: FeatureWorks;
  /** Rechecks the streams' credentials while the bus cannot vouch for notices. */
  streamCheck?: NodeJS.Timeout;
}

/**
 * The consumers of the event log (realtime, the features' work such as afterCommit hooks and
 * webhooks, the mail outbox), started, and what the bus carries between instances: new events,
 * changed credentials, roles and counts.
 */
export async function withEventConsumers(
  { config, logger }: Base,
  { store, countCache }: Stores,
  { ctx, auth, outbox, systemRepositories }: Services,
  { bus }: Cluster,
): Promise<EventConsumers> {
  // One reader of the event log for realtime streams; other instances' commits arrive through
  // the bus when there is one, and by polling the log either way.
  const feed = new LogFeed({
    store,
    logger,
    pollMs: config.realtime.pollMs,
    publish: bus ? (seq) => bus.publish('events', String(seq)) : undefined,
  });
  await feed.start();
  const realtime = new RealtimeHub(feed, config.realtime, logger);
  realtime.start();
  const works = new FeatureWorks(featuresOf(ctx.registry.model, config), {
    ctx,
    config,
    feed,
    callerOf: (userId) => callerOfChange(store, auth.roles, userId),
    systemRepositories,
  });
  // The readers a commit wakes serve every commit after it: they run outside the committing request's trace.
  ctx.notifyCommitted = (entity) =>
    detached(() => {
      works.notify(entity);
      feed.notify();
    });
  ctx.notifyCredentialsChanged = () => {
    realtime.recheckAll();
    bus?.publish('credentials');
  };
  await works.start();
  outbox.start();
  if (bus) {
    await bus.on('events', (seq) => feed.heard(Number(seq)));
    await bus.on('credentials', () => realtime.recheckAll());
    await bus.on('roles', () => auth.roles.invalidate(false));
    if (countCache) {
      countCache.announceTo((collection) => bus.publish('counts', collection));
      await bus.on('counts', (collection) => countCache.invalidate(collection, true));
    }
    // A write made outside the servers (psql, an ETL job, the CLI), heard from the database itself.
    if (store.kind === 'postgres' || store.kind === 'mongo')
      await bus.on(CHANGED_TOPIC, (collection) => {
        countCache?.invalidate(collection, true);
        if (collection === ROLES) auth.roles.invalidate(false);
        if (CREDENTIALS.has(collection)) realtime.recheckAll();
      });
    auth.roles.onChange = () => bus.publish('roles');
    auth.roles.trust = bus;
    bus.onResume = () => {
      countCache?.clear();
      auth.roles.invalidate(false);
      realtime.recheckAll();
      feed.notify();
    };
    await bus.start();
  }
  // A stream holds a credential: while the bus cannot vouch for notices, streams are checked at the bound.
  const streamCheck = bus
    ? setInterval(() => {
        if (!bus.trusted) realtime.recheckAll();
      }, config.cluster.maxStalenessMs)
    : undefined;
  streamCheck?.unref();
  return { feed, realtime, works, streamCheck };
}

/** The author of a logged change as a Caller, as they are now; a deleted user keeps only its id. */
async function callerOfChange(store: Store, roles: RoleTable, userId: string | undefined): Promise<Caller> {
  const none: Caller = { roles: [], permissions: new Set<string>(), isAdmin: false };
  if (!userId) return none;
  const user = await store.get(USERS, userId);
  if (!user) return { ...none, user: { id: userId, email: '', displayName: '' } };
  return callerForUser(user, roles);
}
