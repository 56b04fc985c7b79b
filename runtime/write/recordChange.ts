import type { ChangeEventName } from '../context/hookTypes.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { AUDIT_LOGS, ENTITY_VERSIONS, FIELD_CHANGES } from '../model/collections.js';
import type { EntityModel } from '../model/types.js';
import { nullFilled, type Picker } from '../store/common/compiledLiteral.js';
import type { Doc, Store } from '../store/types.js';
import { newId } from './prepareWrite.js';
import { pruneHistory } from './pruneHistory.js';

export type ChangeType = 'create' | 'update' | 'delete' | 'archive' | 'restore' | 'trash' | 'untrash';

/** One change of one record, as a write operation reports it. */
export interface Change {
  changeType: ChangeType;
  before?: Doc;
  after?: Doc;
  /** The event-log name when it is not the change type's own (incremented, reverted). */
  event?: ChangeEventName;
  /** A create under an id this write minted: no history exists yet, so nothing is looked up or pruned. */
  fresh?: boolean;
}

const EVENT_OF: Record<ChangeType, ChangeEventName> = {
  create: 'created',
  update: 'updated',
  delete: 'deleted',
  archive: 'archived',
  restore: 'restored',
  trash: 'trashed',
  untrash: 'untrashed',
};

/** The event-log name of a change. */
export function eventOf(change: Change): ChangeEventName {
  return change.event ?? EVENT_OF[change.changeType];
}

export interface ChangeContext {
  changedBy: string;
  /** The client's address, when the change came through a request; shown to administrators only. */
  changedFrom?: string;
  changeReason?: string;
}

const NOT_DIFFED = new Set(['updatedAt', 'createdAt', 'id']);

export function hasHistory(entity: EntityModel): boolean {
  return entity.versioning !== 'none' || entity.fields.some((f) => f.trackChanges);
}

/** Per entity: its snapshot's fields, compiled once. */
const snapshots = new WeakMap<EntityModel, Picker>();

/** A record as history keeps it: every field but hidden ones; encrypted values stay encrypted. */
export function snapshotOf(entity: EntityModel, doc: Doc): Doc {
  let pick = snapshots.get(entity);
  if (!pick) {
    pick = nullFilled(entity.fields.filter((f) => !f.hidden).map((f) => f.name));
    snapshots.set(entity, pick);
  }
  return pick(doc) as Doc;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The names of the fields a change changed; a localized field's are per locale (`title.de`), so
 * history shows which translation changed.
 */
export function changedFields(entity: EntityModel, before: Doc | undefined, after: Doc | undefined): string[] {
  return diffedNames(entity).filter((name) => {
    const next = valueAt(after, name);
    return before ? !same(valueAt(before, name), next) : next !== null && next !== undefined;
  });
}

/** Per entity: the names changedFields compares, listed once. */
const diffed = new WeakMap<EntityModel, string[]>();

function diffedNames(entity: EntityModel): string[] {
  let names = diffed.get(entity);
  if (!names) {
    names = entity.fields
      .filter((f) => !f.hidden && !NOT_DIFFED.has(f.name))
      .flatMap((f) => (f.localized ? f.localized.locales.map((locale) => `${f.name}.${locale}`) : [f.name]));
    diffed.set(entity, names);
  }
  return names;
}

/** A field's value in a record, or one locale's (`title.de`); null when it has none. */
export function valueAt(doc: Doc | undefined, name: string): unknown {
  const dot = name.indexOf('.');
  if (dot < 0) return doc?.[name] ?? null;
  const byLocale = doc?.[name.slice(0, dot)];
  return (
    (byLocale && typeof byLocale === 'object' ? (byLocale as Record<string, unknown>)[name.slice(dot + 1)] : null) ??
    null
  );
}

/**
 * Writes the history of one change inside the caller's transaction: a full snapshot with the next
 * version number, an audit entry with old and new values, and a pending record for every tracked
 * field whose value really changed. Then prunes what retention no longer keeps.
 */
export async function recordChange(
  tx: Store,
  ctx: RuntimeContext,
  entity: EntityModel,
  change: Change,
  context: ChangeContext,
): Promise<void> {
  const record = (change.after ?? change.before)!;
  const now = ctx.now().toISOString();
  const stamp = { createdAt: now, updatedAt: now };
  const reason = context.changeReason ? { changeReason: context.changeReason } : {};
  const from = context.changedFrom ? { changedFrom: context.changedFrom } : {};
  const fields = change.changeType === 'delete' ? [] : changedFields(entity, change.before, change.after);

  if (entity.versioning === 'full') {
    const [latest] = change.fresh
      ? []
      : await tx.find(ENTITY_VERSIONS, {
          where: {
            and: [
              { field: 'entity', op: 'eq', value: entity.plural },
              { field: 'entityId', op: 'eq', value: record.id },
            ],
          },
          sort: [{ field: 'version', direction: 'desc' }],
          limit: 1,
          select: ['version'],
        });
    const version = ((latest?.version as number | undefined) ?? 0) + 1;
    await tx.insert(ENTITY_VERSIONS, {
      id: newId(),
      entity: entity.plural,
      entityId: record.id,
      version,
      versionKey: `${entity.plural}:${record.id}:${version}`,
      snapshot: snapshotOf(entity, record),
      changedBy: context.changedBy,
      ...from,
      changeType: change.changeType,
      changedFields: fields,
      ...reason,
      ...stamp,
    });
  }
  if (entity.versioning === 'simple') {
    const changes = Object.fromEntries(
      fields.map((name) => [name, { old: valueAt(change.before, name), new: valueAt(change.after, name) }]),
    );
    await tx.insert(AUDIT_LOGS, {
      id: newId(),
      entity: entity.plural,
      entityId: record.id,
      changedBy: context.changedBy,
      ...from,
      changeType: change.changeType,
      changedFields: fields,
      changes,
      ...reason,
      ...stamp,
    });
  }
  if (change.before && change.after) {
    const tracked = new Set(entity.fields.filter((f) => f.trackChanges).map((f) => f.name));
    for (const name of fields.filter((name) => tracked.has(name.split('.')[0]))) {
      await tx.insert(FIELD_CHANGES, {
        id: newId(),
        entity: entity.plural,
        entityId: record.id,
        fieldName: name,
        oldValue: valueAt(change.before, name),
        newValue: valueAt(change.after, name),
        changedBy: context.changedBy,
        approvalStatus: 'pending',
        ...reason,
        ...stamp,
      });
    }
  }
  // A fresh record has its one version, which retention always keeps.
  if (entity.history && !change.fresh) await pruneHistory(tx, entity, record.id, ctx.now());
}
