import type { ChangeEvent } from '../../write/eventLog.js';
import { frameOf, GROUP_FLUSH_BYTES, type RealtimeStream, type StreamGroup } from './realtimeStream.js';
import { namesEachMember, type SubscriberEvent, type SubscriptionView } from './subscriptionView.js';
import { TokenBucket } from './tokenBucket.js';

type Decide = (event: ChangeEvent) => SubscriberEvent | undefined;

/**
 * The streams that keep up with the feed and decide every event alike (the same entities,
 * constraints and fields: SubscriptionView.groupKey). The group decides each event once and
 * writes it to its members, so an event nobody of the group sees costs one decision, however
 * many streams are open. Where the key stands for each member's own id (ownership, an
 * assignee), the event is decided once for the members the record does not name and once for
 * each member it names.
 *
 * The members share one token bucket (no fuller than any member's when it joined): a group
 * whose members would get more than their events per second pauses as one, and goes on from
 * where it is when a tenth of a second's tokens have come, so streams held to their rate still
 * cost one decision and one frame per event. Each event any member gets takes a token, so no
 * member gets more than its rate. A member whose socket is full leaves and goes on by itself.
 */
export class LiveGroup implements StreamGroup {
  readonly members = new Set<RealtimeStream>();
  readonly bucket: TokenBucket;
  private readonly byUser = new Map<string, Set<RealtimeStream>>();
  private readonly deciders = new Map<string | undefined, Decide>();
  private readonly personal: boolean;
  /** Set while the group waits for tokens. */
  private paused?: NodeJS.Timeout;

  constructor(
    readonly key: string,
    /** Makes the decisions (any member's view: they decide alike). */
    private readonly view: SubscriptionView,
    /** Every event up to this one was sent to the members or is not for them. */
    public position: number,
    private readonly hooks: {
      /** Told of each member that left by itself. */
      left(member: RealtimeStream): void;
      /** Called when a paused group has tokens again: it is to be given the events after its position. */
      resume(group: LiveGroup): void;
    },
    eventsPerSecond: number,
  ) {
    this.personal = namesEachMember(key);
    this.bucket = new TokenBucket(eventsPerSecond);
  }

  /** Whether the group waits for tokens (it is then behind the feed). */
  get isPaused(): boolean {
    return this.paused !== undefined;
  }

  /** Stops waiting for tokens (the group is dropped). */
  stop(): void {
    clearTimeout(this.paused);
    this.paused = undefined;
  }

  add(member: RealtimeStream): void {
    this.members.add(member);
    const user = member.view.userId;
    if (user === undefined) return;
    const mine = this.byUser.get(user);
    if (mine) mine.add(member);
    else this.byUser.set(user, new Set([member]));
  }

  remove(member: RealtimeStream): void {
    this.members.delete(member);
    const user = member.view.userId;
    const mine = user === undefined ? undefined : this.byUser.get(user);
    mine?.delete(member);
    if (mine?.size === 0) this.byUser.delete(user!);
  }

  /**
   * Sends the events after the position (in order, without a gap) to the members that see them,
   * as far as the tokens go; a paused group ignores them (it asks for them again, `resume`).
   */
  advance(events: readonly ChangeEvent[]): void {
    if (this.paused) return;
    const batch = new FrameBatch();
    const send = (shown: SubscriberEvent, to: Iterable<RealtimeStream> | undefined, skip?: Set<string>) => {
      // One buffer for every member: the frame is encoded once, not once per socket.
      const frame = Buffer.from(frameOf(shown));
      if (!to) return batch.addShared(frame, shown.seq);
      for (const member of to) if (!skip?.has(member.view.userId!)) batch.addOwn(member, frame, shown.seq);
    };
    for (const event of events) {
      if (event.seq <= this.position) continue;
      const named = this.namedMembers(event);
      const shown = this.deciderFor(undefined)(event);
      const theirs = [...(named ?? [])].flatMap((user) => {
        const mine = this.byUser.get(user);
        const seen = mine && this.deciderFor(user)(event);
        return seen ? [{ seen, to: [...mine] }] : [];
      });
      if ((shown || theirs.length > 0) && !this.bucket.take()) {
        this.pause();
        break;
      }
      // Where the key names no member, every member gets the same frames: they are kept once.
      if (shown) send(shown, this.personal ? this.members : undefined, named);
      for (const { seen, to } of theirs) send(seen, to);
      this.position = event.seq;
      if (batch.bytes >= GROUP_FLUSH_BYTES) this.write(batch);
    }
    this.write(batch);
  }

  /**
   * Writes what the batch holds, each member's frames as one chunk (one write and one chunk for
   * the client to read, however many events), and empties it. A member whose socket does not
   * take it leaves the group.
   */
  private write(batch: FrameBatch): void {
    const { shared, own } = batch.take();
    const deliverTo = (member: RealtimeStream, { frames, seq }: Frames, chunk = joined(frames)) => {
      if (!this.members.has(member)) return;
      if (member.deliver(chunk, seq) && member.flush(this.position)) return;
      this.remove(member);
      this.hooks.left(member);
    };
    if (shared.frames.length > 0) {
      const chunk = joined(shared.frames);
      for (const member of [...this.members]) deliverTo(member, shared, chunk);
    }
    for (const [member, frames] of own) deliverTo(member, frames);
  }

  private pause(): void {
    this.paused = setTimeout(() => {
      this.paused = undefined;
      this.hooks.resume(this);
    }, this.bucket.batchWait());
    this.paused.unref();
  }

  /** The members' ids the record holds (before or after the change) in a field or an array field. */
  private namedMembers(event: ChangeEvent): Set<string> | undefined {
    if (!this.personal || this.byUser.size === 0) return undefined;
    const named = new Set<string>();
    const look = (value: unknown) => {
      if (typeof value === 'string' && this.byUser.has(value)) named.add(value);
    };
    for (const state of [event.before, event.after]) {
      if (!state) continue;
      for (const value of Object.values(state)) {
        if (Array.isArray(value)) for (const item of value) look(item);
        else look(value);
      }
    }
    return named.size > 0 ? named : undefined;
  }

  private deciderFor(user: string | undefined): Decide {
    let decide = this.deciders.get(user);
    if (!decide) {
      decide = this.view.decider(this.key, user);
      // One per member the records name; a busy group forgets them now and then.
      if (this.deciders.size > 2 * this.members.size + 16) this.deciders.clear();
      this.deciders.set(user, decide);
    }
    return decide;
  }
}

/** One buffer of the frames, copied only when there are several. */
const joined = (frames: Buffer[]) => (frames.length === 1 ? frames[0] : Buffer.concat(frames));

/** Frames in order, the id of the last, and their bytes. */
interface Frames {
  frames: Buffer[];
  seq: number;
  bytes: number;
}

const noFrames = (): Frames => ({ frames: [], seq: 0, bytes: 0 });

/** The frames an advance of a group has decided, until they are written. */
class FrameBatch {
  /** Frames for every member (groups whose key names no member). */
  private shared = noFrames();
  /** Each member's own frames (groups whose key names members). */
  private own = new Map<RealtimeStream, Frames>();
  /** The most any one member is to be sent (what GROUP_FLUSH_BYTES bounds). */
  bytes = 0;

  addShared(frame: Buffer, seq: number): void {
    this.add(this.shared, frame, seq);
  }

  addOwn(member: RealtimeStream, frame: Buffer, seq: number): void {
    let mine = this.own.get(member);
    if (!mine) {
      mine = noFrames();
      this.own.set(member, mine);
    }
    this.add(mine, frame, seq);
  }

  take(): { shared: Frames; own: Map<RealtimeStream, Frames> } {
    const taken = { shared: this.shared, own: this.own };
    this.shared = noFrames();
    this.own = new Map();
    this.bytes = 0;
    return taken;
  }

  private add(to: Frames, frame: Buffer, seq: number): void {
    to.frames.push(frame);
    to.seq = seq;
    to.bytes += frame.length;
    this.bytes = Math.max(this.bytes, to.bytes);
  }
}
