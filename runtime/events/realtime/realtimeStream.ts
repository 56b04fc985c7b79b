import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ErrorCode } from '../../errors/apiError.js';
import type { LogFeed } from '../logFeed.js';
import type { SubscriberEvent, SubscriptionView } from './subscriptionView.js';
import { TokenBucket } from './tokenBucket.js';

export interface StreamLimits {
  eventsPerSecond: number;
  /** The client must take what was written within this time, or the stream is closed. */
  slowConsumerMs: number;
}

/** What a stream sees of the group that sends it its events. */
export interface StreamGroup {
  readonly position: number;
  readonly bucket: TokenBucket;
}

/** The event a stream ends with when the client must act (reload, sign in again). */
export const STREAM_ERROR_EVENT = 'stream.error';
/** Events read at a time by a stream behind the feed's memory (each up to two 1 MB records). */
const PAGE = 50;
/** Bytes a group's writes may hold corked for one stream before the socket is asked to take them. */
export const GROUP_FLUSH_BYTES = 256 * 1024;

/**
 * One Server-Sent Events stream. It pulls from the log feed from its own position, so a stream
 * that resumes (Last-Event-ID) and one that is live run the same code, each event is written at
 * most once and always in log order. What waits for the client is never more than the socket's
 * buffer: a client that does not read for `slowConsumerMs` is disconnected (it resumes from
 * its last id); one that would get more than `eventsPerSecond` gets the rest later.
 */
export class RealtimeStream {
  /** Every event up to this one was sent or is not for this subscriber. */
  private position: number;
  /** The last id the client was told. */
  private told: number;
  private pumping = false;
  private wanted = false;
  private closed = false;
  /** What it may still send while it reads the feed itself (a group holds one for all its members). */
  private bucket: TokenBucket;
  private unlisten?: () => void;
  private readonly closeListeners: (() => void)[] = [];
  private caughtUp?: () => void;
  /** While set, a group of streams that decide alike sends this one its events (see LiveGroup). */
  private group?: StreamGroup;
  /** The socket did not take a group's last write: wait for it before writing more. */
  private backlogged = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly feed: LogFeed,
    readonly view: SubscriptionView,
    position: number,
    private readonly limits: StreamLimits,
    private readonly logger: Logger,
  ) {
    this.position = position;
    this.told = position;
    this.bucket = new TokenBucket(limits.eventsPerSecond);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Every event up to this one was sent or is not for this subscriber. */
  get at(): number {
    return this.group?.position ?? this.position;
  }

  /** Called whenever the stream has sent everything the feed has read. */
  onCaughtUp(listener: () => void): void {
    this.caughtUp = listener;
  }

  /**
   * From now on `group` sends this stream its events; it stops reading the feed itself. The
   * group's tokens go no higher than this stream's: its rate holds across the move.
   */
  joinGroup(group: StreamGroup): void {
    this.unlisten?.();
    this.unlisten = undefined;
    group.bucket.lower(this.bucket.available);
    this.group = group;
  }

  /**
   * Reads the feed itself again, after `position` (every event up to it was sent or is not for
   * it), with the tokens its group had left.
   */
  leaveGroup(position: number): void {
    if (!this.group) return;
    this.bucket = this.group.bucket.copy();
    this.group = undefined;
    this.position = position;
    if (this.closed) return;
    this.unlisten = this.feed.listen(() => this.wake());
    this.wake();
  }

  /**
   * A group's event for this subscriber (the group took the token), held corked until `flush`;
   * false when the stream closed, or its socket is full (see flush).
   */
  deliver(frame: string | Buffer, seq: number): boolean {
    if (this.closed) return false;
    this.cork();
    this.res.write(frame);
    this.told = seq;
    // Corked, a write only buffers: past GROUP_FLUSH_BYTES the socket is asked to take it now.
    return this.res.writableLength <= GROUP_FLUSH_BYTES || this.flush(seq);
  }

  /**
   * Sends what a group's writes left corked; false when the socket did not take it all (more than
   * its high-water mark still waits): the stream then leaves the group and goes on by itself
   * after `position` once the client has read it. While corked, `write`'s own answer says
   * nothing of the client, so the socket is judged only here.
   */
  flush(position: number): boolean {
    this.uncork();
    if (this.closed) return false;
    if (this.res.writableLength <= this.res.writableHighWaterMark) return true;
    this.backlogged = true;
    this.leaveGroup(position);
    return false;
  }

  /** Starts sending: everything after the position, then what the feed reads next. */
  start(): void {
    this.res.on('close', () => this.close());
    this.unlisten = this.feed.listen(() => this.wake());
    this.wake();
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** A comment that keeps proxies from closing the stream, and the position reached without events. */
  heartbeat(): void {
    if (this.closed) return;
    let text = ': ping\n\n';
    const position = this.at;
    if (position > this.told && !this.pumping) {
      // An id without data dispatches nothing, but a reconnect starts after it.
      text += `id: ${position}\n\n`;
      this.told = position;
    }
    this.res.write(text);
  }

  /** Ends the stream with an error event the client can act on. */
  fail(code: ErrorCode | 'EVENTS_EXPIRED', message: string): void {
    if (this.closed) return;
    this.res.write(`event: ${STREAM_ERROR_EVENT}\ndata: ${JSON.stringify({ error: { code, message } })}\n\n`);
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unlisten?.();
    if (!this.res.writableEnded) this.res.end();
    for (const listener of this.closeListeners) listener();
  }

  private wake(): void {
    if (this.closed || this.group) return;
    if (this.pumping) {
      this.wanted = true;
      return;
    }
    this.pumping = true;
    this.pump()
      .catch((error) => {
        this.logger.warn({ err: error }, 'realtime stream failed');
        this.fail('INTERNAL_ERROR', 'The stream failed; reconnect with Last-Event-ID to resume');
      })
      .finally(() => {
        this.pumping = false;
        if (this.wanted) {
          this.wanted = false;
          this.wake();
        } else if (!this.closed && this.position === this.feed.head) this.caughtUp?.();
      });
  }

  private async pump(): Promise<void> {
    if (this.backlogged) {
      this.backlogged = false;
      if (this.res.writableNeedDrain) await this.drained();
    }
    while (!this.closed && this.position < this.feed.head) {
      const events = await this.feed.after(this.position, PAGE);
      if (events.length === 0) return;
      if (events[0].seq !== this.position + 1) {
        this.fail('EVENTS_EXPIRED', `Events after ${this.position} are no longer kept; reload, then subscribe anew`);
        return;
      }
      // The events of a page leave in as few writes as the socket allows.
      this.cork();
      try {
        for (const event of events) {
          if (this.closed) return;
          const shown = await this.view.view(event);
          if (shown) await this.send(shown);
          this.position = event.seq;
        }
      } finally {
        this.uncork();
      }
    }
  }

  private corked = false;
  private cork(): void {
    if (this.corked || this.closed) return;
    this.res.cork();
    this.corked = true;
  }
  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.res.uncork();
  }

  private async send(event: SubscriberEvent): Promise<void> {
    await this.takeToken();
    if (this.closed) return;
    const written = this.res.write(frameOf(event));
    this.told = event.seq;
    if (!written) {
      this.uncork();
      await this.drained();
    }
  }

  /** Waits until the socket took the buffered data; closes the stream when that takes too long. */
  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.logger.info('realtime client too slow; stream closed (it resumes with Last-Event-ID)');
        done();
        this.res.destroy();
        this.close();
      }, this.limits.slowConsumerMs);
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }

  /** Waits for a token, a batch of them at a time (TokenBucket.batchWait). */
  private async takeToken(): Promise<void> {
    for (;;) {
      if (this.bucket.take() || this.closed) return;
      this.uncork();
      await new Promise((resolve) => setTimeout(resolve, this.bucket.batchWait()));
      this.cork();
    }
  }
}

/** The text of an event, made once per data object (subscribers without `select` share one). */
const frames = new WeakMap<object, string>();
export function frameOf(event: SubscriberEvent): string {
  const data = frames.get(event.data) ?? JSON.stringify(event.data);
  frames.set(event.data, data);
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${data}\n\n`;
}
