import type { Base } from './base.js';
import type { Cluster } from './cluster.js';
import type { EventConsumers } from './events.js';
import type { Routes } from './routes.js';
import type { Services } from './services.js';
import type { Stores } from './store.js';
import type { Upkeep } from './upkeep.js';

export interface Shutdown {
  /** Stops the scheduler, the features' work and the sweeper (close does this first, then closes the store). */
  stopWork(): Promise<void>;
  /** Stops the work, then closes the store, the bus and Redis; once, however often it is called. */
  close(): Promise<void>;
}

/** The way down, the reverse of the way up: streams end first, then the work, then the connections. */
export function withShutdown(
  { config, tracing }: Base,
  { store }: Stores,
  { redis, bus }: Cluster,
  { feed, realtime, works, streamCheck }: EventConsumers,
  { scheduler, sweeper }: Upkeep,
  { drain }: Routes,
  { outbox, ctx }: Pick<Services, 'outbox' | 'ctx'>,
): Shutdown {
  let stopping: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const stopWork = () => {
    stopping ??= (async () => {
      clearInterval(sweeper);
      clearInterval(streamCheck);
      // Streams end first: their clients reconnect (elsewhere) with Last-Event-ID.
      realtime.closeAll();
      feed.stop();
      await scheduler.stop(config.server.shutdownGraceMs);
      await Promise.all([works.stop(), outbox.stop()]);
    })();
    return stopping;
  };
  return {
    stopWork,
    close() {
      closing ??= (async () => {
        drain.draining = true;
        await stopWork();
        // The bus first: what the work published on the way down leaves through the store.
        await bus?.close();
        await store.close();
        await ctx.media?.storage.close();
        await redis?.quit().catch(() => undefined);
        // Last: the spans of the way down go out with the rest.
        await tracing?.shutdown().catch(() => undefined);
      })();
      return closing;
    },
  };
}
