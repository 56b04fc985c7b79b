/** One channel of the bus as the health report and the metrics show it. */
export interface ChannelState {
  /** The broker confirmed the subscription (Redis SUBSCRIBE reply, PostgreSQL LISTEN). */
  subscribed: boolean;
  /** Milliseconds since any message arrived on it; null when none has since start. */
  lastMessageAgeMs: number | null;
}

/** The bus between instances as `/api/health` (`cluster`) and `/api/metrics` report it. */
export interface BusState {
  transport: 'redis' | 'postgres' | 'mongodb';
  /** Every channel subscribed and this instance's own pulse came back within `maxStalenessMs`. */
  up: boolean;
  /** How old the newest proof is that every notice has been heard (null: never). */
  stalenessMs: number | null;
  maxStalenessMs: number;
  /** Other instances heard on the pulse channel in the last few pulses. */
  peers: number;
  channels: Record<string, ChannelState>;
}

/** The channel every instance pulses on: its own pulse coming back proves the whole round trip. */
export const PULSE_TOPIC = 'pulse';
/** Pulses per staleness bound: a lost pulse or two still leaves the bus up. */
const PULSES_PER_BOUND = 4;
/** A peer counts as present while it pulsed within this many pulse intervals. */
const PEER_PULSES = 8;
/** Peers remembered before the silent ones are swept. */
const MAX_PEERS = 256;

/**
 * Decides whether an instance may trust what it cached. A notice is a hint that a cache is
 * stale; a cache may only be kept while every notice sent before `maxStalenessMs` ago has surely
 * arrived. That is proved, not assumed: every channel's subscription was confirmed by the broker,
 * and the instance's own pulse, published at time t, came back (the broker delivers in the order
 * it accepted, so every notice accepted before t arrived first). While the newest such proof is
 * older than the bound, `trusted` is false and the caches read the store.
 */
export class BusWatch {
  private readonly subscribed = new Set<string>();
  private readonly lastMessage = new Map<string, number>();
  private readonly peersSeen = new Map<string, number>();
  private confirmedAt?: number;
  /** When the last channel's subscription was confirmed: notices from before it may be lost. */
  private subscribedSince?: number;

  constructor(
    readonly transport: BusState['transport'],
    readonly maxStalenessMs: number,
    private readonly topics: () => Iterable<string>,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** How often to pulse so that the proof stays fresher than the bound. */
  get pulseMs(): number {
    return Math.max(25, Math.floor(this.maxStalenessMs / PULSES_PER_BOUND));
  }

  /** A pulse message: the sender's clock reading, read back only by the sender. */
  pulse(): string {
    return String(this.clock());
  }

  /** The broker confirmed `topic`; true when that completes the set (caches must start over then). */
  confirmSubscribed(topic: string): boolean {
    const before = this.allSubscribed();
    this.subscribed.add(topic);
    if (before || !this.allSubscribed()) return false;
    this.subscribedSince = this.clock();
    return true;
  }

  /** The connection that listens was lost: nothing is subscribed and no proof holds. */
  lost(): void {
    this.subscribed.clear();
    this.confirmedAt = undefined;
    this.subscribedSince = undefined;
  }

  /** A message arrived on `topic` (from `sender`, this instance when `own`). */
  heard(topic: string, sender: string, own: boolean, message: string): void {
    const now = this.clock();
    this.lastMessage.set(topic, now);
    if (topic !== PULSE_TOPIC) return;
    if (!own) {
      this.peersSeen.set(sender, now);
      // Restarted instances come back under new ids: the silent ones go, even if nobody asks for state().
      if (this.peersSeen.size > MAX_PEERS) this.countPeers(now);
      return;
    }
    // Only a pulse sent after every subscription held proves that nothing was missed.
    const sentAt = Number(message);
    if (Number.isFinite(sentAt) && this.subscribedSince !== undefined && sentAt >= this.subscribedSince)
      this.confirmedAt = Math.max(this.confirmedAt ?? sentAt, sentAt);
  }

  get trusted(): boolean {
    return this.confirmedAt !== undefined && this.clock() - this.confirmedAt <= this.maxStalenessMs;
  }

  state(): BusState {
    const now = this.clock();
    const channels: Record<string, ChannelState> = {};
    for (const topic of this.topics()) {
      const last = this.lastMessage.get(topic);
      channels[topic] = {
        subscribed: this.subscribed.has(topic),
        lastMessageAgeMs: last === undefined ? null : Math.round(now - last),
      };
    }
    const peers = this.countPeers(now);
    return {
      transport: this.transport,
      up: this.trusted,
      stalenessMs: this.confirmedAt === undefined ? null : Math.round(now - this.confirmedAt),
      maxStalenessMs: this.maxStalenessMs,
      peers,
      channels,
    };
  }

  /** Peers heard within the last few pulses; the others are forgotten. */
  private countPeers(now: number): number {
    for (const [peer, at] of this.peersSeen) if (now - at > this.pulseMs * PEER_PULSES) this.peersSeen.delete(peer);
    return this.peersSeen.size;
  }

  private allSubscribed(): boolean {
    for (const topic of this.topics()) if (!this.subscribed.has(topic)) return false;
    return true;
  }
}
