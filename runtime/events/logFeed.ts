import type { Logger } from 'pino';
import type { Store } from '../store/types.js';
import { type ChangeEvent, eventsAfter, lastEventSeq } from '../write/eventLog.js';

export interface LogFeedOptions {
  store: Store;
  logger: Logger;
  /** How often the log is read while someone listens and no notice came (other instances' commits). */
  pollMs: number;
  /** Told after a read found events committed through this instance (other instances learn of them). */
  publish?(seq: number): void;
}

/** Events kept in memory for listeners that are close behind the head: at most this many... */
const CACHE_SIZE = 4096;
/** ...and about this many bytes of records (a few large records must not hold gigabytes). */
const CACHE_BYTES = 32 * 1024 * 1024;
/** A row holds a record twice (before and after), a record up to the 1 MB body limit. */
const READ_BATCH = 100;
/** How long a commit's notice waits for others before the log is read. */
const COALESCE_MS = 5;
/**
 * Reads for listeners behind the memory, kept for the others close behind them: at most this
 * many, each of READ_BATCH events, together about this many bytes, for this long.
 */
const CATCH_UP_READS = 4;
const CATCH_UP_BYTES = 8 * 1024 * 1024;
const CATCH_UP_MS = 2000;

/** Events after `position` read from the log for a listener behind the memory, shared with others near it. */
interface CatchUpRead {
  position: number;
  events: Promise<ChangeEvent[]>;
  bytes: number;
  at: number;
}

/**
 * One reader of the event log per instance. It reads what was committed since its last read,
 * once for every listener (realtime streams, webhook delivery), keeps the newest events in
 * memory, and wakes the listeners. A read happens when this instance committed, when another
 * instance says it did (Redis), and every `pollMs` while anyone listens. While no listener wants
 * the events themselves (no stream open, no webhook enabled), a read only moves the head: a
 * listener that wants them later reads what it missed from the log.
 */
export class LogFeed {
  /** The last sequence number read from the log. */
  head = 0;
  private cache: ChangeEvent[] = [];
  private sizes: number[] = [];
  private bytes = 0;
  private catchUp: CatchUpRead[] = [];
  /** Reads of the log made for listeners behind the memory, shared or not (tests). */
  catchUpReads = 0;
  /** Each listener, with whether it wants the events read for it now. */
  private readonly listeners = new Map<() => void, () => boolean>();
  private reading?: Promise<void>;
  private soon?: NodeJS.Timeout;
  private again = false;
  private localCommit = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: LogFeedOptions) {}

  async start(): Promise<void> {
    this.head = await lastEventSeq(this.options.store);
    this.timer = setInterval(() => {
      if (this.listeners.size > 0) this.notify(false);
    }, this.options.pollMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.soon);
  }

  /** Something committed (`local`: through this instance) or may have: read the log now. */
  notify(local = true): void {
    if (this.stopped) return;
    this.localCommit ||= local;
    if (this.reading || this.soon) {
      this.again ||= Boolean(this.reading);
      return;
    }
    // A short pause gathers the commits of a busy moment into one read and one write per stream.
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.readNow();
    }, COALESCE_MS);
  }

  private readNow(): void {
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.again) {
        this.again = false;
        this.notify(false);
      }
    });
  }

  /** Another instance committed up to `seq`. */
  heard(seq: number): void {
    if (seq > this.head) this.notify(false);
  }

  /**
   * Calls `listener` after each read that found events; returns the unsubscribe function. While
   * `wants` answers false for every listener, the events are not read into memory for them.
   */
  listen(listener: () => void, wants: () => boolean = () => true): () => void {
    this.listeners.set(listener, wants);
    return () => this.listeners.delete(listener);
  }

  get listening(): number {
    return this.listeners.size;
  }

  /**
   * Events after `position`, oldest first, up to `limit`: from memory when it reaches back that
   * far. Further back, listeners at nearby positions (streams that fell behind together, held to
   * the same rate) share reads of READ_BATCH events instead of each reading the log.
   */
  async after(position: number, limit: number): Promise<ChangeEvent[]> {
    if (position >= this.head) return [];
    const first = this.cache[0]?.seq;
    if (first !== undefined && first <= position + 1) {
      const start = position + 1 - first;
      return this.cache.slice(start, start + limit);
    }
    const now = Date.now();
    this.catchUp = this.catchUp.filter((read) => now - read.at < CATCH_UP_MS);
    for (const read of this.catchUp) {
      if (read.position > position) continue;
      const events = await read.events;
      // The read holds every event after its position up to its last: any position in between is answered.
      const start = firstAfter(events, position);
      if (start < events.length) return events.slice(start, start + limit);
    }
    return (await this.readBehind(position, now)).slice(0, limit);
  }

  private readBehind(position: number, now: number): Promise<ChangeEvent[]> {
    this.catchUpReads++;
    const read: CatchUpRead = {
      position,
      events: eventsAfter(this.options.store, position, READ_BATCH),
      bytes: 0,
      at: now,
    };
    this.catchUp.push(read);
    if (this.catchUp.length > CATCH_UP_READS) this.catchUp.shift();
    read.events.then(
      (events) => {
        read.bytes = events.reduce((sum, e) => sum + approximateBytes(e.before) + approximateBytes(e.after), 0);
        // Large records are not kept beyond the callers already waiting: the newest reads stay.
        const kept: CatchUpRead[] = [];
        let total = 0;
        for (const earlier of [...this.catchUp].reverse()) {
          total += earlier.bytes;
          if (total > CATCH_UP_BYTES) break;
          kept.unshift(earlier);
        }
        this.catchUp = kept;
      },
      () => {
        this.catchUp = this.catchUp.filter((kept) => kept !== read);
      },
    );
    return read.events;
  }

  /** Every event after `position` up to the head, when memory still holds them all; else undefined. */
  inMemoryAfter(position: number): ChangeEvent[] | undefined {
    if (position >= this.head) return [];
    const first = this.cache[0]?.seq;
    if (first === undefined || first > position + 1) return undefined;
    return this.cache.slice(position + 1 - first);
  }

  private async read(): Promise<void> {
    const local = this.localCommit;
    this.localCommit = false;
    try {
      if (!this.anyWants()) {
        const seq = await lastEventSeq(this.options.store);
        if (seq <= this.head) return;
        // The memory holds an unbroken run of events ending at the head, or nothing.
        this.forget();
        this.head = seq;
        if (local) this.options.publish?.(this.head);
        for (const listener of this.listeners.keys()) listener();
        return;
      }
      for (;;) {
        const events = await eventsAfter(this.options.store, this.head, READ_BATCH);
        if (events.length === 0) return;
        this.remember(events);
        this.head = events.at(-1)!.seq;
        if (local) this.options.publish?.(this.head);
        for (const listener of this.listeners.keys()) listener();
        if (events.length < READ_BATCH) return;
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'reading the event log failed; the next notice or poll tries again');
    }
  }

  private forget(): void {
    this.cache = [];
    this.sizes = [];
    this.bytes = 0;
  }

  private anyWants(): boolean {
    for (const wants of this.listeners.values()) if (wants()) return true;
    return false;
  }

  private remember(events: ChangeEvent[]): void {
    // The cache stays one unbroken run of sequence numbers ending at the head.
    if (this.cache.length > 0 && this.cache.at(-1)!.seq + 1 !== events[0].seq) this.forget();
    for (const event of events) {
      const size = approximateBytes(event.before) + approximateBytes(event.after) + 200;
      this.cache.push(event);
      this.sizes.push(size);
      this.bytes += size;
    }
    let drop = 0;
    while (this.cache.length - drop > 1 && (this.cache.length - drop > CACHE_SIZE || this.bytes > CACHE_BYTES)) {
      this.bytes -= this.sizes[drop];
      drop++;
    }
    if (drop > 0) {
      this.cache.splice(0, drop);
      this.sizes.splice(0, drop);
    }
  }
}

/** The index of the first of `events` (ascending by seq) after `position`. */
function firstAfter(events: ChangeEvent[], position: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (events[middle].seq <= position) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** About how many bytes a stored value takes in memory: string lengths, 8 per other scalar. */
function approximateBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length * 2;
  if (value === null || typeof value !== 'object' || depth > 8) return 8;
  let total = 16;
  if (Array.isArray(value)) for (const item of value) total += approximateBytes(item, depth + 1);
  else for (const [key, item] of Object.entries(value)) total += key.length * 2 + approximateBytes(item, depth + 1);
  return total;
}
