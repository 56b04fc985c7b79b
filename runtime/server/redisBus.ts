import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Notices between the instances of one deployment (Redis publish/subscribe, or PostgreSQL LISTEN/NOTIFY). */
export interface Bus {
  /** Calls `handler` with every other instance's notices on `topic`. */
  on(topic: string, handler: (message: string) => void): Promise<void>;
  publish(topic: string, message?: string): void;
  /** False while notices could be missed (the listening connection is down). */
  readonly connected: boolean;
  /** Called when listening resumes after a loss: notices of the gap are gone. */
  onResume?: () => void;
  close(): Promise<void>;
}

/**
 * Notices between the instances of one deployment over Redis publish/subscribe: role changes
 * (empty the role cache), commits (read the event log), ended credentials (check realtime
 * streams). A notice is a hint; nothing is lost when one is missed (caches expire, the log is
 * polled, streams are checked on every heartbeat). An instance does not hear its own notices.
 */
export class RedisBus implements Bus {
  private readonly instance = randomUUID();
  private readonly handlers = new Map<string, (message: string) => void>();
  onResume?: () => void;

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  static async connect(redis: Redis, prefix: string, logger: Logger): Promise<RedisBus> {
    // Unlike the limiter's client, the subscriber may wait for its connection.
    const subscriber = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
    subscriber.on('error', (error) => logger.warn({ err: error }, 'redis subscriber error'));
    const bus = new RedisBus(redis, subscriber, prefix, logger);
    subscriber.on('message', (channel: string, text: string) => bus.deliver(channel, text));
    // ioredis subscribes again after a reconnect; what was published in between is gone.
    let readyBefore = subscriber.status === 'ready';
    subscriber.on('ready', () => {
      if (readyBefore) bus.onResume?.();
      readyBefore = true;
    });
    return bus;
  }

  get connected(): boolean {
    return this.subscriber.status === 'ready';
  }

  /** Calls `handler` with every other instance's notices on `topic`. */
  async on(topic: string, handler: (message: string) => void): Promise<void> {
    const channel = `${this.prefix}:${topic}`;
    this.handlers.set(channel, handler);
    await this.subscriber
      .subscribe(channel)
      .catch((error) => this.logger.warn({ err: error, topic }, 'cannot subscribe to a redis channel'));
  }

  publish(topic: string, message = ''): void {
    this.redis
      .publish(`${this.prefix}:${topic}`, `${this.instance} ${message}`)
      .catch((error) => this.logger.warn({ err: error, topic }, 'cannot publish a notice to redis'));
  }

  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => undefined);
  }

  private deliver(channel: string, text: string): void {
    const space = text.indexOf(' ');
    const sender = space < 0 ? text : text.slice(0, space);
    if (sender === this.instance) return;
    this.handlers.get(channel)?.(space < 0 ? '' : text.slice(space + 1));
  }
}
