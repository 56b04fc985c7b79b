import type { Caller } from '../../access/caller.js';
import { matchesWhere } from '../../access/matchesWhere.js';
import { settleThroughFor } from '../../access/settleThrough.js';
import type { RuntimeContext } from '../../context.js';
import { listConstraint } from '../../entities/listConstraint.js';
import { presentRecord } from '../../entities/presentRecord.js';
import type { EntityModel } from '../../model/types.js';
import { hasThrough } from '../../store/common/throughIds.js';
import type { Where } from '../../store/types.js';
import type { ChangeEvent } from '../eventLog.js';

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
const CONSTRAINT_TTL_MS = 1000;

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

  constructor(
    private readonly ctx: RuntimeContext,
    private caller: Caller,
    private readonly subscription: Subscription,
  ) {
    this.byPlural = new Map(subscription.entities.map((e) => [e.plural, e]));
  }

  /** Checks that the caller may list every subscribed entity (401/403 as the list would answer). */
  async check(): Promise<void> {
    for (const entity of this.subscription.entities) await this.constraintOf(entity);
  }

  /** The caller was authenticated again (roles, tenants and keys may have changed). */
  replaceCaller(caller: Caller): void {
    this.caller = caller;
    this.constraints.clear();
  }

  watches(plural: string): boolean {
    return this.byPlural.has(plural);
  }

  async view(event: ChangeEvent): Promise<SubscriberEvent | undefined> {
    const entity = this.byPlural.get(event.entity);
    if (!entity) return undefined;
    let where: Where | undefined;
    try {
      where = await this.constraintOf(entity);
    } catch {
      where = NOTHING;
      this.constraints.set(entity.plural, { where, until: Date.now() + CONSTRAINT_TTL_MS });
    }
    const before = event.before ? matchesWhere(event.before, await this.settled(where, event.before)) : false;
    const after = event.after ? matchesWhere(event.after, await this.settled(where, event.after)) : false;
    const type = `${entity.plural}.${event.event}`;
    if (event.event === 'deleted') return before ? { seq: event.seq, type, data: { id: event.entityId } } : undefined;
    if (after) return { seq: event.seq, type, data: this.present(entity, event.after!) };
    if (!before) return undefined;
    return event.event === 'archived'
      ? { seq: event.seq, type, data: { id: event.entityId } }
      : { seq: event.seq, type: `${entity.plural}.deleted`, data: { id: event.entityId, reason: 'hidden' } };
  }

  /** A rule through a reference asks the store about the referenced record (rules without one need nothing). */
  private settled(where: Where | undefined, state: Record<string, unknown>): Promise<Where | undefined> {
    return hasThrough(where) ? settleThroughFor(this.ctx.store, where, state) : Promise.resolve(where);
  }

  private present(entity: EntityModel, doc: Record<string, unknown>): Record<string, unknown> {
    const select = this.subscription.select;
    if (!select) return shownOnce(entity, doc);
    const shown = presentRecord(entity, doc as never) as Record<string, unknown>;
    const out: Record<string, unknown> = { id: shown.id };
    for (const name of select) if (name in shown) out[name] = shown[name];
    return out;
  }

  private async constraintOf(entity: EntityModel): Promise<Where | undefined> {
    const now = Date.now();
    const cached = this.constraints.get(entity.plural);
    if (cached && cached.until > now) return cached.where;
    const where = await listConstraint(this.ctx, this.caller, entity, this.subscription.includeArchived);
    this.constraints.set(entity.plural, { where, until: now + CONSTRAINT_TTL_MS });
    return where;
  }
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
