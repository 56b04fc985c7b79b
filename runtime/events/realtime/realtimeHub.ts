import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Caller } from '../../access/caller.js';
import type { RealtimeConfig } from '../../config/runtimeConfig.js';
import { ApiError } from '../../errors/apiError.js';
import type { LogFeed } from '../logFeed.js';
import { RealtimeStream } from './realtimeStream.js';
import type { SubscriptionView } from './subscriptionView.js';

export interface OpenStream {
  res: ServerResponse;
  /** Whose streams count together against maxStreamsPerUser. */
  holder: string;
  view: SubscriptionView;
  /** The last event the subscriber has; it receives every later one. */
  position: number;
  /** Authenticates the stream's request again: the caller now, or undefined when its credential ended. */
  recheck(): Promise<Caller | undefined>;
}

interface Entry {
  stream: RealtimeStream;
  holder: string;
  recheck: OpenStream['recheck'];
}

/**
 * The open realtime streams of this instance: the per-user and per-instance limits, one
 * heartbeat for all, credentials checked again on every heartbeat and whenever a session or key
 * ended here, and a clean end for every stream at shutdown.
 */
export class RealtimeHub {
  private readonly entries = new Set<Entry>();
  private readonly perHolder = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;
  private recheckAgain = false;

  constructor(
    private readonly feed: LogFeed,
    private readonly config: RealtimeConfig,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  start(): void {
    this.timer = setInterval(() => {
      for (const { stream } of this.entries) stream.heartbeat();
      this.recheckAll();
    }, this.config.heartbeatMs);
    this.timer.unref();
  }

  /** Throws 429 when `holder` or this instance has no stream left; call before answering. */
  admit(holder: string): void {
    if (this.entries.size >= this.config.maxStreams)
      throw new ApiError(
        'RATE_LIMITED',
        `This server has its ${this.config.maxStreams} realtime streams open; try later`,
      );
    if ((this.perHolder.get(holder) ?? 0) >= this.config.maxStreamsPerUser)
      throw new ApiError(
        'RATE_LIMITED',
        `You have ${this.config.maxStreamsPerUser} realtime streams open; close one before opening another`,
      );
  }

  open({ res, holder, view, position, recheck }: OpenStream): RealtimeStream {
    this.admit(holder);
    const stream = new RealtimeStream(res, this.feed, view, position, this.config, this.logger);
    const entry: Entry = { stream, holder, recheck };
    this.entries.add(entry);
    this.perHolder.set(holder, (this.perHolder.get(holder) ?? 0) + 1);
    stream.onClose(() => {
      this.entries.delete(entry);
      const left = (this.perHolder.get(holder) ?? 1) - 1;
      if (left > 0) this.perHolder.set(holder, left);
      else this.perHolder.delete(holder);
    });
    stream.start();
    return stream;
  }

  /** Authenticates every stream again; those whose session or key ended are closed. */
  recheckAll(): void {
    if (this.checking) {
      this.recheckAgain = true;
      return;
    }
    this.checking = this.recheckEach().finally(() => {
      this.checking = undefined;
      if (this.recheckAgain) {
        this.recheckAgain = false;
        this.recheckAll();
      }
    });
  }

  /** Ends every stream (shutdown): the clients reconnect elsewhere with their last id. */
  closeAll(): void {
    clearInterval(this.timer);
    for (const { stream } of [...this.entries]) stream.close();
  }

  private async recheckEach(): Promise<void> {
    for (const { stream, recheck } of [...this.entries]) {
      if (stream.isClosed) continue;
      let caller: Caller | undefined;
      try {
        caller = await recheck();
      } catch (error) {
        if (!(error instanceof ApiError)) {
          this.logger.warn({ err: error }, 'checking a realtime credential failed; the next heartbeat tries again');
          continue;
        }
      }
      if (caller) stream.view.replaceCaller(caller);
      else stream.fail('UNAUTHORIZED', 'Your session ended or your API key was revoked; sign in and subscribe again');
    }
  }
}
