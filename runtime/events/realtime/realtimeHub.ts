import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { RealtimeConfig } from '../../config/runtimeConfig.js';
import type { Caller } from '../../context/caller.js';
import { ApiError } from '../../errors/apiError.js';
import { GRANTS } from '../../model/collections.js';
import type { ChangeEvent } from '../../write/eventLog.js';
import type { LogFeed } from '../logFeed.js';
import { LiveGroup } from './liveGroup.js';
import { RealtimeStream } from './realtimeStream.js';
import { CONSTRAINT_TTL_MS, type SubscriptionView } from './subscriptionView.js';

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

/** Events a group behind the feed's memory reads from the log at a time. */
const GROUP_PAGE = 100;
/**
 * Streams pinged, or whose credentials are checked again, before the event loop is let go to
 * other work: at 10,000 streams a heartbeat is some 0.9 s of work (a write to each socket and a
 * check of each credential), which in one piece held every request back for that long.
 */
const HEARTBEAT_SLICE = 250;
/** Constraints of grouped streams asked again per second at most (each is a few store reads). */
const REFRESHES_PER_TICK = 1000;

/**
 * The open realtime streams of this instance: the per-user and per-instance limits, one
 * heartbeat for all, credentials checked again on every heartbeat and whenever a session or key
 * ended here, and a clean end for every stream at shutdown.
 *
 * A stream that has caught up with the feed joins the live group of the streams that decide
 * alike (LiveGroup), which decides each event once for all of them, and holds all of them to
 * their rate together; only streams behind or whose rules reach through a reference read the
 * feed one by one. A group held to its rate falls behind the feed: streams that catch up later
 * start a new group for the same key, which the first joins once it catches up; behind the
 * feed's memory the group reads the log itself, as one. The constraints of
 * grouped streams are asked again every second (at most REFRESHES_PER_TICK a second, so with
 * many thousands of streams each is asked every few seconds) and on every heartbeat; a stream
 * whose constraint changed moves to its group. The grantee of a changed grant reads on by
 * itself from that change, with its constraints asked again, so what the grant shares (or no
 * longer shares) shows in the very next event.
 */
export class RealtimeHub {
  private readonly entries = new Set<Entry>();
  private readonly perHolder = new Map<string, number>();
  /** Every live group, and by key the one a stream that caught up may join. */
  private readonly groups = new Set<LiveGroup>();
  private readonly joinable = new Map<string, LiveGroup>();
  private readonly groupOf = new Map<RealtimeStream, LiveGroup>();
  /** Groups reading the log behind the feed's memory (readBehind): they wait for that read. */
  private readonly reading = new Set<LiveGroup>();
  private unlistenGroups?: () => void;
  private refresher?: NodeJS.Timeout;
  private refreshing = false;
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
    this.timer = setInterval(() => void this.heartbeat(), this.config.heartbeatMs);
    this.timer.unref();
    this.unlistenGroups = this.feed.listen(
      () => this.advanceGroups(),
      () => this.groups.size > 0,
    );
    this.refresher = setInterval(() => void this.refreshGroups(), CONSTRAINT_TTL_MS);
    this.refresher.unref();
  }

  /** Streams that left their group because their socket was full (tests read it). */
  leftGroups = 0;

  /** How many live groups send to how many streams (the rest read the feed one by one). */
  get grouping(): { groups: number; grouped: number } {
    return { groups: this.groups.size, grouped: this.groupOf.size };
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
    stream.onCaughtUp(() => this.join(stream));
    stream.onClose(() => {
      this.ungroup(stream);
      this.entries.delete(entry);
      const left = (this.perHolder.get(holder) ?? 1) - 1;
      if (left > 0) this.perHolder.set(holder, left);
      else this.perHolder.delete(holder);
    });
    stream.start();
    return stream;
  }

  /** Pings every stream, a slice at a time, then checks every credential again. */
  private async heartbeat(): Promise<void> {
    let pinged = 0;
    for (const { stream } of [...this.entries]) {
      stream.heartbeat();
      if (++pinged % HEARTBEAT_SLICE === 0) await nextTurn();
    }
    this.recheckAll();
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
    clearInterval(this.refresher);
    this.unlistenGroups?.();
    for (const group of this.groups) group.stop();
    for (const { stream } of [...this.entries]) stream.close();
  }

  /** A stream that caught up joins the group that decides as it does, when that group is where it is. */
  private join(stream: RealtimeStream): void {
    if (stream.isClosed || this.groupOf.has(stream) || stream.at !== this.feed.head) return;
    const key = stream.view.groupKey();
    if (key === undefined) return;
    let group = this.joinable.get(key);
    if (group?.position !== stream.at) {
      // None yet, or the one there is held to its rate behind the feed: this stream starts another.
      group = new LiveGroup(
        key,
        stream.view,
        stream.at,
        {
          left: (member) => {
            this.groupOf.delete(member);
            if (!member.isClosed) this.leftGroups++;
          },
          resume: (paused) => this.advanceGroup(paused),
        },
        this.config.eventsPerSecond,
      );
      this.groups.add(group);
      this.joinable.set(key, group);
    }
    group.add(stream);
    this.groupOf.set(stream, group);
    stream.joinGroup(group);
  }

  /** Takes a stream out of its group; it reads the feed itself from the group's position. */
  private ungroup(stream: RealtimeStream): void {
    const group = this.groupOf.get(stream);
    if (!group) return;
    this.groupOf.delete(stream);
    group.remove(stream);
    this.dropIfEmpty(group);
    stream.leaveGroup(group.position);
  }

  /**
   * After each read of the log: every group sends what it read. At a change of a grant, its
   * grantee's streams leave their groups and ask their constraints again before the next event.
   */
  private advanceGroups(): void {
    for (const group of [...this.groups]) this.advanceGroup(group);
  }

  private advanceGroup(group: LiveGroup): void {
    if (group.isPaused || this.reading.has(group) || !this.groups.has(group)) return;
    const events = this.feed.inMemoryAfter(group.position);
    if (events === undefined) void this.readBehind(group);
    else this.advanceThrough(group, events);
  }

  /**
   * A group behind the feed's memory (held to its rate while the log grew faster) reads the log
   * itself, a page at a time, and stays one group: one read and one decision per event for all
   * its members, until it is back within the memory. Events the log no longer keeps, or a read
   * that fails, send each member on by itself (each then hears EVENTS_EXPIRED or tries again).
   */
  private async readBehind(group: LiveGroup): Promise<void> {
    this.reading.add(group);
    let events: ChangeEvent[] = [];
    try {
      events = await this.feed.after(group.position, GROUP_PAGE);
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the event log for a realtime group failed; its streams read it alone');
    } finally {
      this.reading.delete(group);
    }
    if (!this.groups.has(group)) return;
    if (events[0]?.seq !== group.position + 1) {
      for (const member of [...group.members]) this.ungroup(member);
      return;
    }
    this.advanceThrough(group, events);
    this.advanceGroup(group);
  }

  private advanceThrough(group: LiveGroup, events: readonly ChangeEvent[]): void {
    let from = 0;
    for (let i = 0; i < events.length && !group.isPaused; i++) {
      if (events[i].entity !== GRANTS) continue;
      group.advance(events.slice(from, i + 1));
      // Held to its rate before the grant: its grantees leave when the group reaches it.
      if (group.position < events[i].seq) break;
      from = i + 1;
      const grantees = granteesOf(events[i]);
      for (const member of [...group.members])
        if (member.view.userId !== undefined && grantees.has(member.view.userId)) {
          member.view.forget();
          this.ungroup(member);
        }
    }
    if (from < events.length) group.advance(from === 0 ? events : events.slice(from));
    this.dropIfEmpty(group);
    this.mergeCaughtUp(group);
  }

  /**
   * A group that caught up with the feed again meets the key's group that streams opened while
   * it was behind: its members move there, so the key is decided once per event again, with the
   * fewer tokens of the two. Where that other group is behind now, this one is the one to join.
   */
  private mergeCaughtUp(group: LiveGroup): void {
    if (group.isPaused || !this.groups.has(group) || group.position !== this.feed.head) return;
    const other = this.joinable.get(group.key);
    if (other === group) return;
    if (other?.isPaused !== false || other.position !== group.position) {
      this.joinable.set(group.key, group);
      return;
    }
    for (const member of [...group.members]) {
      group.remove(member);
      other.add(member);
      this.groupOf.set(member, other);
      member.joinGroup(other);
    }
    other.bucket.lower(group.bucket.available);
    group.stop();
    this.groups.delete(group);
  }

  private dropIfEmpty(group: LiveGroup): void {
    if (group.members.size > 0) return;
    group.stop();
    this.groups.delete(group);
    if (this.joinable.get(group.key) === group) this.joinable.delete(group.key);
  }

  /** Asks the stalest constraints of grouped streams again; a stream whose constraint changed moves. */
  private async refreshGroups(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const now = Date.now();
      let budget = REFRESHES_PER_TICK;
      for (const stream of [...this.groupOf.keys()]) {
        if (budget <= 0) break;
        if (stream.view.staleAt > now) continue;
        budget--;
        await this.refreshOne(stream);
      }
    } finally {
      this.refreshing = false;
    }
  }

  private async refreshOne(stream: RealtimeStream): Promise<void> {
    try {
      await stream.view.refresh();
    } catch (error) {
      this.logger.warn({ err: error }, 'asking a realtime constraint again failed; the next tick tries again');
      return;
    }
    const group = this.groupOf.get(stream);
    if (group && stream.view.groupKey() !== group.key) this.ungroup(stream);
  }

  private async recheckEach(): Promise<void> {
    let checked = 0;
    for (const { stream, recheck } of [...this.entries]) {
      if (stream.isClosed) continue;
      // The checks answer from remembered sessions without waiting for anything: the event loop gets turns between slices.
      if (++checked % HEARTBEAT_SLICE === 0) await nextTurn();
      let caller: Caller | undefined;
      try {
        caller = await recheck();
      } catch (error) {
        if (!(error instanceof ApiError)) {
          this.logger.warn({ err: error }, 'checking a realtime credential failed; the next heartbeat tries again');
          continue;
        }
      }
      if (caller) {
        if (stream.view.replaceCaller(caller) && this.groupOf.has(stream)) await this.refreshOne(stream);
      } else stream.fail('UNAUTHORIZED', 'Your session ended or your API key was revoked; sign in and subscribe again');
    }
  }
}

/** The users a change of a grant concerns. */
function granteesOf(event: ChangeEvent): Set<string> {
  const grantees = new Set<string>();
  for (const state of [event.before, event.after])
    if (state && typeof state.grantedTo === 'string') grantees.add(state.grantedTo);
  return grantees;
}
