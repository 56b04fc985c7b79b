import type { ChangeStream } from 'mongodb';
import type { Logger } from 'pino';
import type { MongoStore } from '../store/mongo/mongoStore.js';
import type { Bus } from './bus.js';
import type { BusState } from './busWatch.js';

/** The topic of a change: its message is the collection written. */
const CHANGED = 'changed';
/** How long a lost change stream waits before it is opened again. */
const RECONNECT_MS = 1000;
/** Answers per staleness bound: a late one or two still leave the proof fresh. */
const ANSWERS_PER_BOUND = 4;

/**
 * The changes of a MongoDB database, whoever makes them, heard through a change stream (replica
 * sets and sharded clusters): each change raises its collection's generation in the caches. The
 * stream is asked again at least four times per staleness bound; every answer, with changes or
 * without, moves its resume token, and that proves every change before it arrived. While the
 * newest proof is older than `cluster.maxStaleness` (the stream lost, the server slow), caches use
 * nothing they hold; when the stream is open again they forget everything, since changes of the
 * gap are unheard. Nothing is published: MongoDB carries every instance's writes itself.
 */
export class MongoChangeBus implements Bus {
  private readonly handlers = new Map<string, (message: string) => void>();
  private stream?: ChangeStream;
  private provedAt?: number;
  private lastChangeAt?: number;
  private opened = false;
  private closed = false;
  onResume?: () => void;

  constructor(
    private readonly store: MongoStore,
    private readonly logger: Logger,
    readonly maxStalenessMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  async on(topic: string, handler: (message: string) => void): Promise<void> {
    this.handlers.set(topic, handler);
  }

  async start(): Promise<void> {
    this.open();
  }

  /** The instances' own notices need no bus here: every write reaches every stream. */
  publish(): void {}

  get trusted(): boolean {
    return this.provedAt !== undefined && this.clock() - this.provedAt <= this.maxStalenessMs;
  }

  state(): BusState {
    const now = this.clock();
    return {
      transport: 'mongodb',
      up: this.trusted,
      stalenessMs: this.provedAt === undefined ? null : Math.round(now - this.provedAt),
      maxStalenessMs: this.maxStalenessMs,
      peers: 0,
      channels: {
        [CHANGED]: {
          subscribed: this.stream !== undefined,
          lastMessageAgeMs: this.lastChangeAt === undefined ? null : Math.round(now - this.lastChangeAt),
        },
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.provedAt = undefined;
    await this.stream?.close().catch(() => undefined);
  }

  private open(): void {
    if (this.closed) return;
    const stream = this.store.watchChanges(Math.max(25, Math.floor(this.maxStalenessMs / ANSWERS_PER_BOUND)));
    this.stream = stream;
    const resumed = this.opened;
    let proved = false;
    const prove = () => {
      this.provedAt = this.clock();
      // The first proof after a loss: what changed in the gap is unknown, so caches start over.
      if (!proved && resumed) this.onResume?.();
      proved = true;
    };
    stream.on('resumeTokenChanged', prove);
    stream.on('change', (change: { ns?: { coll?: string }; operationType?: string }) => {
      prove();
      this.lastChangeAt = this.clock();
      const collection = change.ns?.coll;
      if (collection) this.handlers.get(CHANGED)?.(collection);
      // A dropped database or an invalidated stream names no one collection: everything is forgotten.
      else this.onResume?.();
    });
    const lost = (error?: Error) => {
      if (this.stream !== stream) return;
      this.stream = undefined;
      this.provedAt = undefined;
      if (this.closed) return;
      if (error) this.logger.warn({ err: error }, 'mongodb change stream lost; opening it again');
      stream.close().catch(() => undefined);
      setTimeout(() => this.open(), RECONNECT_MS).unref();
    };
    stream.on('error', lost);
    stream.on('close', () => lost());
    this.opened = true;
  }
}
