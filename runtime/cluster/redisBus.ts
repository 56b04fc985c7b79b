import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { PulsedBus } from './bus.js';
import { PULSE_TOPIC } from './busWatch.js';

/** Notices a publisher could not send, kept for when Redis answers again (the oldest go first). */
const MAX_UNSENT = 1000;

/**
 * Notices between the instances of one deployment over Redis publish/subscribe: role changes
 * (empty the role cache), commits (read the event log), ended credentials (check realtime
 * streams), written collections (forget counts and sessions). An instance does not act on its
 * own notices, but hears its pulse come back, which is what `trusted` rests on (busWatch.ts).
 *
 * The subscriber connection subscribes only once ioredis calls it ready, one channel at a time,
 * each confirmed by Redis's reply; ioredis's own resubscription is off, since a SUBSCRIBE written
 * before its ready check turns the connection into subscriber mode and fails that check.
 */
export class RedisBus extends PulsedBus {
  private readonly unsent = new Set<string>();
  private started = false;
  private closed = false;
  private resumed = false;
  /** Whether the publishing connection was ready once: before that, notices wait without a word. */
  private everReady: boolean;
  /** Whether this outage was told already (once per outage, by its message: a stack says nothing here). */
  private told = false;

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    maxStalenessMs: number,
  ) {
    super('redis', maxStalenessMs);
    this.everReady = redis.status === 'ready';
  }

  static async connect(redis: Redis, prefix: string, logger: Logger, maxStalenessMs: number): Promise<RedisBus> {
    const subscriber = redis.duplicate({
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      autoResubscribe: false,
      lazyConnect: true,
    });
    const bus = new RedisBus(redis, subscriber, prefix, logger, maxStalenessMs);
    subscriber.on('error', (error: Error) => bus.outage('redis subscriber error', error));
    subscriber.on('message', (channel: string, text: string) => bus.deliver(channel, text));
    subscriber.on('ready', () => void bus.subscribeAll());
    subscriber.on('close', () => bus.watch.lost());
    // Notices that could not go out are sent once Redis answers again.
    redis.on('ready', () => bus.flushUnsent());
    return bus;
  }

  async on(topic: string, handler: (message: string) => void): Promise<void> {
    this.handlers.set(topic, handler);
    if (this.started && this.subscriber.status === 'ready') await this.subscribe(topic);
  }

  async start(): Promise<void> {
    this.started = true;
    this.startPulse();
    await this.subscriber.connect().catch((error: Error) => this.outage('redis subscriber cannot connect', error));
  }

  publish(topic: string, message = ''): void {
    const text = `${this.instance} ${message}`;
    this.redis.publish(`${this.prefix}:${topic}`, text).catch((error: Error) => {
      if (topic === PULSE_TOPIC || this.closed) return;
      // Before the first connection a notice simply waits for it.
      if (this.everReady) this.outage('cannot publish a notice to redis; it is sent when redis answers', error);
      this.keepUnsent(topic, text);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopPulse();
    await this.subscriber.quit().catch(() => undefined);
  }

  private keepUnsent(topic: string, text: string): void {
    const entry = `${topic}\n${text}`;
    this.unsent.delete(entry);
    this.unsent.add(entry);
    if (this.unsent.size > MAX_UNSENT) this.unsent.delete(this.unsent.values().next().value!);
  }

  /** Tells an outage once, by its message, until Redis answers again. */
  private outage(message: string, error: Error): void {
    if (this.told || this.closed) return;
    this.told = true;
    this.logger.warn({ error: error?.message ?? String(error) }, message);
  }

  private flushUnsent(): void {
    this.everReady = true;
    this.told = false;
    const entries = [...this.unsent];
    this.unsent.clear();
    for (const entry of entries) {
      const split = entry.indexOf('\n');
      const topic = entry.slice(0, split);
      const text = entry.slice(split + 1);
      this.redis.publish(`${this.prefix}:${topic}`, text).catch(() => this.keepUnsent(topic, text));
    }
  }

  /** Subscribes every topic on a fresh connection; the first time it completes after a loss, caches start over. */
  private async subscribeAll(): Promise<void> {
    if (!this.started) return;
    this.told = false;
    for (const topic of [...this.handlers.keys()]) {
      if (this.subscriber.status !== 'ready') return;
      await this.subscribe(topic);
    }
  }

  private async subscribe(topic: string): Promise<void> {
    try {
      await this.subscriber.subscribe(`${this.prefix}:${topic}`);
    } catch (error) {
      this.logger.warn({ error: (error as Error)?.message, topic }, 'cannot subscribe to a redis channel; retrying');
      // A refused SUBSCRIBE leaves the bus untrusted; a fresh connection tries again.
      if (!this.closed) this.subscriber.disconnect(true);
      return;
    }
    if (!this.watch.confirmSubscribed(topic)) return;
    if (this.resumed) this.onResume?.();
    this.resumed = true;
    this.pulse();
  }

  private deliver(channel: string, text: string): void {
    const space = text.indexOf(' ');
    this.received(
      channel.slice(this.prefix.length + 1),
      space < 0 ? text : text.slice(0, space),
      space < 0 ? '' : text.slice(space + 1),
    );
  }
}
