import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { changesChannel } from '../store/postgres/changeNotices.js';
import type { PgStore } from '../store/postgres/pgStore.js';
import { PulsedBus } from './bus.js';

/** How long a lost listening connection waits before it tries again. */
const RECONNECT_MS = 1000;
/** A notification's payload must stay under 8000 bytes; notices of one moment share one. */
const MAX_PAYLOAD_BYTES = 7000;

/**
 * The instances' notices over PostgreSQL's LISTEN/NOTIFY, for deployments on PostgreSQL without
 * Redis: the same topics as RedisBus, on one channel per app (prefix) and schema, since
 * notifications reach every session of the database. One connection of its own listens; a lost
 * one is opened again. Every topic rides the one channel, so LISTEN confirms them all; the
 * instance's own pulse coming back proves the round trip (busWatch.ts), and while that proof is
 * older than the staleness bound, caches use nothing they hold.
 *
 * The same connection listens to the schema's change channel, where the tables' triggers announce
 * the writes of every connection that is not a server's (changeNotices.ts) under the topic
 * `changed`. Notifications reach a listener in commit order whatever their channel, so the pulse
 * proves those arrived too. Beside Redis, a bus of changes only listens there and pulses there.
 */
export class PgBus extends PulsedBus {
  private client?: pg.Client;
  private closed = false;
  private listenedBefore = false;
  private pending: string[] = [];
  /** Notices on their way out; close waits for them, since they leave through the store's pool. */
  private readonly sending = new Set<Promise<unknown>>();

  private constructor(
    private readonly store: PgStore,
    /** Where this bus publishes (its notices and pulses); it also listens to `changes`. */
    private readonly channel: string,
    private readonly changes: string,
    private readonly logger: Logger,
    maxStalenessMs: number,
  ) {
    super('postgres', maxStalenessMs);
  }

  /** `changesOnly`: the bus beside Redis, which only hears the database's changes. */
  static async connect(
    store: PgStore,
    prefix: string,
    logger: Logger,
    maxStalenessMs: number,
    { changesOnly = false }: { changesOnly?: boolean } = {},
  ): Promise<PgBus> {
    const changes = changesChannel(store.schemaName);
    if (changesOnly) return new PgBus(store, changes, changes, logger, maxStalenessMs);
    const name = `${prefix}:${store.schemaName}`;
    // Channel names are identifiers: at most 63 bytes.
    const channel =
      Buffer.byteLength(name) <= 63 ? name : `entigen:${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
    return new PgBus(store, channel, changes, logger, maxStalenessMs);
  }

  async on(topic: string, handler: (message: string) => void): Promise<void> {
    this.handlers.set(topic, handler);
    if (this.client && this.listenedBefore) this.confirmAll();
  }

  async start(): Promise<void> {
    this.startPulse();
    await this.listen();
  }

  /** Notices published in one turn of the event loop go out as one NOTIFY, a line each. */
  publish(topic: string, message = ''): void {
    if (this.pending.length === 0) setImmediate(() => this.flush());
    this.pending.push(`${topic} ${message.replaceAll('\n', ' ')}`);
  }

  private flush(): void {
    const lines = this.pending;
    this.pending = [];
    let payload = this.instance;
    const send = (text: string) => {
      const sent = this.store
        .notify(this.channel, text)
        .catch((error) => this.logger.warn({ err: error }, 'cannot publish a notice through postgres'))
        .finally(() => this.sending.delete(sent));
      this.sending.add(sent);
    };
    for (const line of lines) {
      if (Buffer.byteLength(payload) + Buffer.byteLength(line) + 1 > MAX_PAYLOAD_BYTES) {
        send(payload);
        payload = this.instance;
      }
      payload += `\n${line}`;
    }
    if (payload !== this.instance) send(payload);
  }

  /** Sends what was published before it, then stops listening (the store closes after the bus). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopPulse();
    this.flush();
    await Promise.all(this.sending);
    this.watch.lost();
    await this.client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = this.store.listener();
    this.client = client;
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.watch.lost();
      this.client = undefined;
      if (this.closed) return;
      if (error) this.logger.warn({ err: error }, 'postgres notice listener lost; reconnecting');
      client.end().catch(() => undefined);
      setTimeout(() => void this.listen(), RECONNECT_MS).unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', ({ payload }) => this.deliver(payload ?? ''));
    try {
      await client.connect();
      // One round trip: the notices' channel first, then the schema's change channel.
      await client.query(
        [...new Set([this.channel, this.changes])]
          .map((channel) => `LISTEN "${channel.replaceAll('"', '""')}"`)
          .join('; '),
      );
      // Notices sent while no connection listened are lost: whoever caches must start over.
      const resumed = this.listenedBefore;
      this.listenedBefore = true;
      if (this.confirmAll() && resumed) this.onResume?.();
      this.pulse();
    } catch (error) {
      lost(error as Error);
    }
  }

  /** One LISTEN carries every topic; true when that completed the set. */
  private confirmAll(): boolean {
    let completed = false;
    for (const topic of this.handlers.keys()) completed = this.watch.confirmSubscribed(topic) || completed;
    return completed;
  }

  private deliver(text: string): void {
    const [sender, ...lines] = text.split('\n');
    for (const line of lines) {
      const space = line.indexOf(' ');
      if (space > 0) this.received(line.slice(0, space), sender, line.slice(space + 1));
    }
  }
}
