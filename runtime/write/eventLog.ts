import type { Caller } from '../context/caller.js';
import type { ChangeEventName } from '../context/hookTypes.js';
import { CHANGE_EVENTS, HOOK_DELIVERIES, SEQUENCES, WEBHOOK_DELIVERIES, WEBHOOKS } from '../model/collections.js';
import type { EntityModel } from '../model/types.js';
import { fieldPicker, type Picker } from '../store/common/compiledLiteral.js';
import { traceOf } from '../store/tracedStore.js';
import { type Condition, type Doc, type NumberingCounter, type Store, UniqueConflict } from '../store/types.js';
import { traceparentOf } from '../telemetry/tracing.js';
import { newId } from './prepareWrite.js';

/** The counter row of the event log (a fixed id: every instance finds the same row). */
const EVENT_SEQUENCE_ID = '000000000000000000000001';
const EVENT_SEQUENCE_NAME = CHANGE_EVENTS;
const EVENT_COUNTER: NumberingCounter = { collection: SEQUENCES, id: EVENT_SEQUENCE_ID, field: 'value', into: 'seq' };

/** One change to append: what happened to which record, with its states before and after. */
export interface LoggedChange {
  event: ChangeEventName;
  id: string;
  before?: Doc | null;
  after?: Doc | null;
}

/** A row of the event log as read back. */
export interface ChangeEvent {
  /** The row's id: unique across databases, so it names the event to webhook receivers. */
  id: string;
  seq: number;
  event: ChangeEventName;
  entity: string;
  entityId: string;
  before: Doc | null;
  after: Doc | null;
  userId: string | null;
  at: string;
  /** The write's W3C traceparent, when traces were on (deliveries continue its trace). */
  trace?: string | null;
}

/**
 * Creates the counter row if this database has none yet (any instance may; the first wins), and
 * lets a store that can number events as they commit do so.
 */
export async function ensureEventSequence(store: Store): Promise<void> {
  if (!(await store.get(SEQUENCES, EVENT_SEQUENCE_ID))) {
    try {
      await store.insert(SEQUENCES, { id: EVENT_SEQUENCE_ID, name: EVENT_SEQUENCE_NAME, value: 0 });
    } catch (error) {
      if (!(error instanceof UniqueConflict)) throw error;
    }
  }
  await store.numberOnCommit?.(CHANGE_EVENTS, EVENT_COUNTER);
}

/** The last sequence number taken (0 for an empty log). */
export async function lastEventSeq(store: Store): Promise<number> {
  return ((await store.get(SEQUENCES, EVENT_SEQUENCE_ID))?.value as number | undefined) ?? 0;
}

/** Bookkeeping of the log's own consumers: logging it would feed the consumers their own work. */
const UNLOGGED: ReadonlySet<string> = new Set([HOOK_DELIVERIES, WEBHOOKS, WEBHOOK_DELIVERIES]);

/** Whether an entity's writes go to the log: every public entity's but the consumers' bookkeeping. */
export function isLogged(entity: EntityModel): boolean {
  return !entity.internal && !UNLOGGED.has(entity.plural);
}

/**
 * Appends changes to the event log inside the write's transaction `tx`. The numbers come from a
 * counter row that is locked until commit, so sequence order is commit order on every store; a
 * rolled-back write leaves no event (and no gap is ever seen committed out of order). The store
 * numbers the rows as the transaction commits where it can (PostgreSQL), which locks the counter
 * for the commit alone, or from one read of the counter per group commit (SQLite, which holds
 * the write lock for the group); otherwise the increment here locks it from now on.
 */
export async function appendEvents(
  tx: Store,
  entity: EntityModel,
  changes: readonly LoggedChange[],
  caller: Caller,
  at: Date,
): Promise<void> {
  if (changes.length === 0 || !isLogged(entity)) return;
  const stamp = at.toISOString();
  const trace = traceparentOf(traceOf(tx)) ?? null;
  const rows: Doc[] = changes.map((change) => ({
    id: newId(),
    seq: null,
    event: change.event,
    entity: entity.plural,
    entityId: change.id,
    before: change.before ? visible(entity, change.before) : null,
    after: change.after ? visible(entity, change.after) : null,
    userId: caller.user?.id ?? null,
    at: stamp,
    trace,
  }));
  if (await tx.insertNumbered?.(CHANGE_EVENTS, rows, EVENT_COUNTER)) return;
  const counter = await tx.increment(SEQUENCES, EVENT_SEQUENCE_ID, { value: changes.length });
  if (!counter) throw new Error('the event log counter row is missing (ensureEventSequence runs at start)');
  let seq = (counter.value as number) - changes.length;
  for (const row of rows) row.seq = ++seq;
  await tx.insertMany(CHANGE_EVENTS, rows);
}

/** Events after `seq`, in order: up to `upTo` and of the named entities only, when given. */
export async function eventsAfter(
  store: Store,
  seq: number,
  limit: number,
  only: { upTo?: number; entities?: readonly string[] } = {},
): Promise<ChangeEvent[]> {
  const conditions: Condition[] = [{ field: 'seq', op: 'gt', value: seq }];
  if (only.upTo !== undefined) conditions.push({ field: 'seq', op: 'lte', value: only.upTo });
  if (only.entities) conditions.push({ field: 'entity', op: 'in', value: [...only.entities] });
  const rows = await store.find(CHANGE_EVENTS, {
    where: conditions.length === 1 ? conditions[0] : { and: conditions },
    sort: [{ field: 'seq', direction: 'asc' }],
    limit,
  });
  return rows as unknown as ChangeEvent[];
}

/** The sequence number of the oldest event still kept; undefined for an empty log. */
export async function oldestEventSeq(store: Store): Promise<number | undefined> {
  const [row] = await store.find(CHANGE_EVENTS, {
    sort: [{ field: 'seq', direction: 'asc' }],
    select: ['seq'],
    limit: 1,
  });
  return row?.seq as number | undefined;
}

export async function eventAt(store: Store, seq: number): Promise<ChangeEvent | undefined> {
  const [row] = await store.find(CHANGE_EVENTS, { where: { field: 'seq', op: 'eq', value: seq }, limit: 1 });
  return row as unknown as ChangeEvent | undefined;
}

/** Per entity: its fields but hidden ones, picked as one literal from a whole record. */
const visibleFields = new WeakMap<EntityModel, Picker>();

/** The record without hidden fields (password and token hashes never enter the log). */
function visible(entity: EntityModel, doc: Doc): Doc {
  let pick = visibleFields.get(entity);
  if (!pick) {
    pick = fieldPicker(entity.fields.filter((field) => !field.hidden).map((field) => field.name));
    visibleFields.set(entity, pick);
  }
  return pick(doc) as Doc;
}

/**
 * Prunes the log: events older than `before`, and the oldest beyond `maxCount` (0: no count
 * limit), but never one after `delivered` (a consumer still needs it). Returns how many went.
 */
export async function pruneEvents(store: Store, before: Date, delivered: number, maxCount = 0): Promise<number> {
  const [lastOld] = await store.find(CHANGE_EVENTS, {
    where: { field: 'at', op: 'lt', value: before.toISOString() },
    sort: [{ field: 'seq', direction: 'desc' }],
    select: ['seq'],
    limit: 1,
  });
  let cutoff = (lastOld?.seq as number | undefined) ?? 0;
  // Sequence numbers have no gaps, so the count limit is a sequence number too.
  if (maxCount > 0) cutoff = Math.max(cutoff, (await lastEventSeq(store)) - maxCount);
  cutoff = Math.min(cutoff, delivered);
  let removed = 0;
  for (;;) {
    const old = await store.find(CHANGE_EVENTS, {
      where: { field: 'seq', op: 'lte', value: cutoff },
      sort: [{ field: 'seq', direction: 'asc' }],
      select: ['id'],
      limit: 500,
    });
    for (const event of old) if (await store.remove(CHANGE_EVENTS, event.id)) removed++;
    if (old.length < 500) return removed;
  }
}
