import type { ChangeEvent } from '../eventLog.js';
import { frameOf, type RealtimeStream } from './realtimeStream.js';
import { namesEachMember, type SubscriberEvent, type SubscriptionView } from './subscriptionView.js';

type Decide = (event: ChangeEvent) => SubscriberEvent | undefined;

/**
 * The streams that keep up with the feed and decide every event alike (the same entities,
 * constraints and fields: SubscriptionView.groupKey). The group decides each event once and
 * writes it to its members, so an event nobody of the group sees costs one decision, however
 * many streams are open. Where the key stands for each member's own id (ownership, an
 * assignee), the event is decided once for the members the record does not name and once for
 * each member it names. A member that cannot take an event at once (no token left, a full
 * socket) leaves and goes on by itself from where it is.
 */
export class LiveGroup {
  readonly members = new Set<RealtimeStream>();
  private readonly byUser = new Map<string, Set<RealtimeStream>>();
  private readonly deciders = new Map<string | undefined, Decide>();
  private readonly personal: boolean;

  constructor(
    readonly key: string,
    /** Makes the decisions (any member's view: they decide alike). */
    private readonly view: SubscriptionView,
    /** Every event up to this one was sent to the members or is not for them. */
    public position: number,
    /** Told of each member that left by itself. */
    private readonly left: (member: RealtimeStream) => void,
  ) {
    this.personal = namesEachMember(key);
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

  /** Sends the events after the position (in order, without a gap) to the members that see them. */
  advance(events: readonly ChangeEvent[]): void {
    const written = new Set<RealtimeStream>();
    const send = (shown: SubscriberEvent, to: Iterable<RealtimeStream>, skip?: Set<string>) => {
      const frame = frameOf(shown);
      for (const member of to) {
        if (skip?.has(member.view.userId!)) continue;
        written.add(member);
        if (member.deliver(frame, shown.seq)) continue;
        this.remove(member);
        this.left(member);
      }
    };
    for (const event of events) {
      if (event.seq <= this.position) continue;
      const named = this.namedMembers(event);
      const shown = this.deciderFor(undefined)(event);
      if (shown) send(shown, this.members, named);
      for (const user of named ?? []) {
        const theirs = this.deciderFor(user)(event);
        const mine = this.byUser.get(user);
        if (theirs && mine) send(theirs, [...mine]);
      }
      this.position = event.seq;
    }
    for (const member of written) member.flush();
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
