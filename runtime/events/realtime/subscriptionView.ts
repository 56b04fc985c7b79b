import { fieldView } from '../../access/fieldAccess.js';
import { listConstraint } from '../../access/listConstraint.js';
import { settleThroughFor } from '../../access/settleThrough.js';
import type { Caller } from '../../context/caller.js';
import type { RuntimeContext } from '../../context/runtimeContext.js';
import { presentRecord } from '../../entities/presentRecord.js';
import type { EntityModel } from '../../model/types.js';
import { matchesWhere } from '../../store/common/matchesWhere.js';
import { hasThrough } from '../../store/common/throughIds.js';
import type { Where } from '../../store/types.js';
import type { ChangeEvent } from '../../write/eventLog.js';

/** What a subscriber asked to see. */
export interface Subscription {
  entities: readonly EntityModel[];
  includeArchived: boolean;
  /** Fields to send besides id (absent: every field GET shows). */
  select?: readonly string[];
}

/** One event as a subscriber receives it. */
export interface SubscriberEvent {
  seq: number;
  /** `<plural>.<created|updated|deleted|archived|restored|incremented|reverted>` */
  type: string;
  data: Record<string, unknown>;
}

/** How long a subscriber's constraint is reused before it is asked again (grants, memberships). */
export const CONSTRAINT_TTL_MS = 1000;

/** Stands for the caller's own id in a group's key. */
const ME = '\u0000me';
/** An id no record holds: how a group decides for the members a record does not name. */
const NOBODY = '\u0000nobody';
/** Operators under which a value no record holds decides as any other value the record does not hold. */
const BY_IDENTITY = new Set(['eq', 'ne', 'in', 'nin', 'contains']);

/** Whether a group's key stands for each member's own id (its members decide per named user). */
export const namesEachMember = (key: string): boolean => key.includes(JSON.stringify(ME));

/** Whether `id` appears in `where` only as a value compared by identity (BY_IDENTITY). */
export function namesOnlyByIdentity(where: Where | null | undefined, id: string): boolean {
  if (!where) return true;
  if ('and' in where) return where.and.every((w) => namesOnlyByIdentity(w, id));
  if ('or' in where) return where.or.every((w) => namesOnlyByIdentity(w, id));
  if ('not' in where) return namesOnlyByIdentity(where.not, id);
  if ('through' in where) return false;
  const values = Array.isArray(where.value) ? where.value : [where.value];
  return !values.includes(id) || BY_IDENTITY.has(where.op);
}

/** Nothing is visible: the caller lost the entity's view permission mid-stream. */
const NOTHING: Where = { field: 'id', op: 'in', value: [] };

/**
 * Decides what one subscriber sees of each logged change, with the list's own constraint
 * (`listConstraint`: roles and field-value scopes, ownership, grants, tenancy, archived) applied
 * to the record's state before and after the change:
 * - visible after: the event, with the record as GET shows it;
 * - visible before but not after: a delete-like event (`<plural>.deleted`, `{ id, reason: 'hidden' }`;
 *   an archive that hides it stays `<plural>.archived` with `{ id }`);
 * - otherwise nothing.
 */
export class SubscriptionView {
  private readonly byPlural: Map<string, EntityModel>;
  private readonly constraints = new Map<string, { where: Where | undefined; until: number }>();
  /** groupKey's answer while the constraints stay as they are ('' for none). */
  private key?: string;
  /** The caller's user as JSON, kept so that each new authentication stringifies only its own. */
  private userText: string;

  constructor(
    private readonly ctx: RuntimeContext,
    private caller: Caller,
    private readonly subscription: Subscription,
  ) {
    this.byPlural = new Map(subscription.entities.map((e) => [e.plural, e]));
    this.userText = JSON.stringify(caller.user);
  }

  /** Checks that the caller may list every subscribed entity (401/403 as the list would answer). */
  async check(): Promise<void> {
    for (const entity of this.subscription.entities) await this.constraintOf(entity);
  }

  /** Asks every constraint again before the next decision (a grant changed). */
  forget(): void {
    this.constraints.clear();
    this.key = undefined;
  }

  /**
   * The caller was authenticated again (roles, tenants and keys may have changed); true when it
   * differs from the one before, whose constraints are then asked again before the next decision.
   * The same caller (the same user, roles, permissions and tenant) keeps them until they go stale
   * as usual: with many streams open, every heartbeat would otherwise ask each one's again.
   */
  replaceCaller(caller: Caller): boolean {
    const userText = JSON.stringify(caller.user);
    const same = sameCaller(this.caller, caller, this.userText, userText);
    this.caller = caller;
    this.userText = userText;
    if (same) return false;
    this.constraints.clear();
    this.key = undefined;
    return true;
  }

  watches(plural: string): boolean {
    return this.byPlural.has(plural);
  }

  async view(event: ChangeEvent): Promise<SubscriberEvent | undefined> {
    const entity = this.byPlural.get(event.entity);
    if (!entity) return undefined;
    const cached = this.constraints.get(entity.plural);
    const where = cached && cached.until > Date.now() ? cached.where : await this.askOrHide(entity);
    const before = event.before ? matchesWhere(event.before, await this.settled(where, event.before)) : false;
    const after = event.after ? matchesWhere(event.after, await this.settled(where, event.after)) : false;
    return outcome(entity, event, before, after, (doc) => this.present(entity, doc));
  }

  /**
   * What this view decides, as a key equal for every view that decides each event alike (the
   * same entities, constraints, fields and archived switch); undefined while a constraint is
   * not known or reaches through a reference (the store must then be asked per record). Where
   * the constraints name the caller's own id only as equal, unequal or contained (ownership, an
   * assignee), the key names it as ME: the views of many users then share one key (see decider).
   */
  groupKey(): string | undefined {
    if (this.key !== undefined) return this.key || undefined;
    const wheres: (Where | null)[] = [];
    for (const entity of this.subscription.entities) {
      const cached = this.constraints.get(entity.plural);
      if (!cached || hasThrough(cached.where)) {
        this.key = '';
        return undefined;
      }
      wheres.push(cached.where ?? null);
    }
    const { entities, includeArchived, select } = this.subscription;
    // Fields the caller may see are part of what the group sends; those seen on own records only
    // differ from member to member, so such a view decides alone.
    const views = entities.map((entity) => fieldView(entity, this.caller));
    if (views.some((view) => view && view.ownerOnly.size > 0)) {
      this.key = '';
      return undefined;
    }
    const unseen = views.map((view) => (view ? [...view.hidden].sort() : null));
    let key = JSON.stringify([entities.map((e) => e.plural), includeArchived, select ?? null, wheres, unseen]);
    const me = this.caller.user?.id;
    if (me && wheres.every((where) => namesOnlyByIdentity(where, me)))
      key = key.replaceAll(JSON.stringify(me), JSON.stringify(ME));
    this.key = key;
    return key;
  }

  /**
   * The decisions of the views with `key` (groupKey), for the user `me` (ME in the key stands
   * for them; undefined for a user the record does not name), without asking anything.
   */
  decider(key: string, me: string | undefined): (event: ChangeEvent) => SubscriberEvent | undefined {
    const text = key.replaceAll(JSON.stringify(ME), JSON.stringify(me ?? NOBODY));
    const wheres = (JSON.parse(text) as [string[], boolean, string[] | null, (Where | null)[]])[3];
    const byPlural = new Map(this.subscription.entities.map((e, i) => [e.plural, wheres[i] ?? undefined]));
    return (event) => {
      const entity = this.byPlural.get(event.entity);
      if (!entity) return undefined;
      const where = byPlural.get(entity.plural);
      const before = event.before ? matchesWhere(event.before, where) : false;
      const after = event.after ? matchesWhere(event.after, where) : false;
      return outcome(entity, event, before, after, (doc) => this.present(entity, doc));
    };
  }

  /** When the oldest of its constraints should be asked again. */
  get staleAt(): number {
    let until = Number.POSITIVE_INFINITY;
    for (const cached of this.constraints.values()) until = Math.min(until, cached.until);
    return until;
  }

  /** Asks every constraint again now (grants, memberships and roles may have changed). */
  async refresh(): Promise<void> {
    for (const entity of this.subscription.entities) await this.askOrHide(entity);
  }

  get userId(): string | undefined {
    return this.caller.user?.id;
  }

  /** A rule through a reference asks the store about the referenced record (rules without one need nothing). */
  private settled(where: Where | undefined, state: Record<string, unknown>): Promise<Where | undefined> {
    return hasThrough(where) ? settleThroughFor(this.ctx.store, where, state) : Promise.resolve(where);
  }

  private present(entity: EntityModel, doc: Record<string, unknown>): Record<string, unknown> {
    const select = this.subscription.select;
    const view = fieldView(entity, this.caller);
    if (!select && !view) return shownOnce(entity, doc);
    const shown = presentRecord(entity, doc as never, view) as Record<string, unknown>;
    if (!select) return shown;
    const out: Record<string, unknown> = { id: shown.id };
    for (const name of select) if (name in shown) out[name] = shown[name];
    return out;
  }

  /** Asks the list's constraint now and keeps it for CONSTRAINT_TTL_MS (throws 401/403 as the list would). */
  private async constraintOf(entity: EntityModel): Promise<Where | undefined> {
    const where = await listConstraint(this.ctx, this.caller, entity, this.subscription.includeArchived);
    this.keep(entity.plural, where, Date.now());
    return where;
  }

  /** As constraintOf, but a caller who lost the entity's view permission mid-stream sees nothing. */
  private async askOrHide(entity: EntityModel): Promise<Where | undefined> {
    try {
      return await this.constraintOf(entity);
    } catch {
      this.keep(entity.plural, NOTHING, Date.now());
      return NOTHING;
    }
  }

  private keep(plural: string, where: Where | undefined, now: number): void {
    const before = this.constraints.get(plural);
    this.constraints.set(plural, { where, until: now + CONSTRAINT_TTL_MS });
    if (!before || JSON.stringify(before.where) !== JSON.stringify(where)) this.key = undefined;
  }
}

/** Whether two authentications of a stream's request found the caller alike, in all its constraints can depend on. */
export function sameCaller(
  a: Caller,
  b: Caller,
  userOfA = JSON.stringify(a.user),
  userOfB = JSON.stringify(b.user),
): boolean {
  return (
    a.permissions === b.permissions &&
    a.isAdmin === b.isAdmin &&
    a.requestedTenantId === b.requestedTenantId &&
    a.credential?.kind === b.credential?.kind &&
    a.roles.length === b.roles.length &&
    a.roles.every((role, i) => role === b.roles[i]) &&
    userOfA === userOfB
  );
}

/** The event a subscriber gets, from whether the record was in its view before and after the change. */
function outcome(
  entity: EntityModel,
  event: ChangeEvent,
  before: boolean,
  after: boolean,
  present: (doc: Record<string, unknown>) => Record<string, unknown>,
): SubscriberEvent | undefined {
  const type = `${entity.plural}.${event.event}`;
  if (event.event === 'deleted') return before ? { seq: event.seq, type, data: { id: event.entityId } } : undefined;
  if (after) return { seq: event.seq, type, data: present(event.after!) };
  if (!before) return undefined;
  return event.event === 'archived' || event.event === 'trashed'
    ? { seq: event.seq, type, data: { id: event.entityId } }
    : { seq: event.seq, type: `${entity.plural}.deleted`, data: { id: event.entityId, reason: 'hidden' } };
}

/** The record as GET shows it, made once per logged state however many subscribers see it. */
const shownStates = new WeakMap<object, Record<string, unknown>>();
function shownOnce(entity: EntityModel, doc: Record<string, unknown>): Record<string, unknown> {
  let shown = shownStates.get(doc);
  if (!shown) {
    shown = presentRecord(entity, doc as never) as Record<string, unknown>;
    shownStates.set(doc, shown);
  }
  return shown;
}
