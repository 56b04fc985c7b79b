import { type FieldView, fieldView, lockedFields, seesField } from '../access/fieldAccess.js';
import { findWritable } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import { sealValue } from '../crypto/signedToken.js';
import { presentRecord } from '../entities/presentRecord.js';
import { ApiError, notFound } from '../errors/apiError.js';
import { AUDIT_LOGS, ENTITY_VERSIONS, FIELD_CHANGES } from '../model/collections.js';
import type { EntityModel, FieldModel } from '../model/types.js';
import type { Doc, Where } from '../store/types.js';
import { applyContentStatus, copyValues } from '../write/prepareWrite.js';
import { valueAt } from '../write/recordChange.js';
import { runWrite } from '../write/writePipeline.js';
import { ofRecord, requireHistoryAccess } from './historyAccess.js';

export interface HistoryPage {
  limit: number;
  /** From the cursor: versions below this number, or audit entries below this id. */
  before?: number | string;
}

const omitNull = (doc: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== null && v !== undefined));

/** Where a change came from is for administrators only. */
const addressFor = (caller: Caller, doc: Doc) => (caller.isAdmin ? doc.changedFrom : undefined);

function versionView(entity: EntityModel, v: Doc, caller: Caller, record: Doc) {
  const view = fieldView(entity, caller);
  return omitNull({
    id: v.id,
    entityId: v.entityId,
    version: v.version,
    snapshot: presentRecord(entity, v.snapshot as Doc, view, record),
    changedBy: v.changedBy,
    changedFrom: addressFor(caller, v),
    changeReason: v.changeReason,
    changeType: v.changeType,
    changedFields: seenNames(view, (v.changedFields as string[] | undefined) ?? [], record),
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  });
}

/** A history path's top-level field (`title.de` is the title's German value). */
const rootOf = (path: string) => path.split('.', 1)[0];

/** The names of `names` (paths, as history records them) whose fields the caller sees on `record`. */
function seenNames(view: FieldView | undefined, names: string[], record: Doc): string[] {
  return view ? names.filter((name) => seesField(view, rootOf(name), record)) : names;
}

/** Encrypted fields stay encrypted in history: their values show as [ENCRYPTED]. */
function maskValue(entity: EntityModel, field: string, value: unknown): unknown {
  const encrypted = entity.fields.some((f) => f.name === field && f.type === 'encryptedKey');
  return encrypted && value !== null && value !== undefined ? ENCRYPTED_PLACEHOLDER : value;
}

function auditView(entity: EntityModel, a: Doc, caller: Caller, record: Doc) {
  const view = fieldView(entity, caller);
  const changes = a.changes
    ? Object.fromEntries(
        Object.entries(a.changes as Record<string, { old: unknown; new: unknown }>)
          .filter(([field]) => seesField(view, rootOf(field), record))
          .map(([field, diff]) => [
            field,
            { old: maskValue(entity, field, diff.old), new: maskValue(entity, field, diff.new) },
          ]),
      )
    : undefined;
  return omitNull({
    id: a.id,
    entityId: a.entityId,
    changedBy: a.changedBy,
    changedFrom: addressFor(caller, a),
    changeType: a.changeType,
    changedFields: seenNames(view, (a.changedFields as string[] | undefined) ?? [], record),
    changes,
    changeReason: a.changeReason,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  });
}

export function fieldChangeView(entity: EntityModel, c: Doc) {
  const field = String(c.fieldName);
  return {
    id: c.id,
    entityId: c.entityId,
    fieldName: c.fieldName,
    oldValue: maskValue(entity, field, c.oldValue ?? null),
    newValue: maskValue(entity, field, c.newValue ?? null),
    changedBy: c.changedBy,
    ...omitNull({
      changeReason: c.changeReason,
      approvedBy: c.approvedBy,
      approvalStatus: c.approvalStatus,
      metadata: c.metadata,
    }),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

/** GET /{plural}/{id}/versions: newest first, `{ items, total, hasMore, nextCursor? }`. */
export async function listVersions(ctx: RuntimeContext, plural: string, id: string, caller: Caller, page: HistoryPage) {
  const { model } = entityOf(ctx, plural);
  const record = await requireHistoryAccess(ctx, model, id, caller);
  const all = ofRecord(model, id);
  const where: Where =
    page.before !== undefined ? { and: [all, { field: 'version', op: 'lt', value: page.before }] } : all;
  const found = await ctx.store.find(ENTITY_VERSIONS, {
    where,
    sort: [{ field: 'version', direction: 'desc' }],
    limit: page.limit + 1,
  });
  const items = found.slice(0, page.limit).map((v) => versionView(model, v, caller, record));
  const hasMore = found.length > page.limit;
  return {
    items,
    total: await ctx.store.count(ENTITY_VERSIONS, { where: all }),
    hasMore,
    ...(hasMore ? { nextCursor: sealValue(ctx.secrets.signing, { h: items.at(-1)!.version }) } : {}),
  };
}

async function findVersion(ctx: RuntimeContext, model: EntityModel, id: string, version: number): Promise<Doc> {
  const [found] = await ctx.store.find(ENTITY_VERSIONS, {
    where: { and: [ofRecord(model, id), { field: 'version', op: 'eq', value: version }] },
    limit: 1,
  });
  if (!found) throw notFound(`Version ${version}`);
  return found;
}

/** GET /{plural}/{id}/versions/{version} */
export async function getVersion(ctx: RuntimeContext, plural: string, id: string, version: number, caller: Caller) {
  const { model } = entityOf(ctx, plural);
  const record = await requireHistoryAccess(ctx, model, id, caller);
  return versionView(model, await findVersion(ctx, model, id, version), caller, record);
}

/** GET /{plural}/{id}/versions/compare?a=&b=: every field of either snapshot, with `changed` flags. */
export async function compareVersions(
  ctx: RuntimeContext,
  plural: string,
  id: string,
  a: number,
  b: number,
  caller: Caller,
) {
  const { model } = entityOf(ctx, plural);
  const record = await requireHistoryAccess(ctx, model, id, caller);
  const view = fieldView(model, caller);
  const [va, vb] = [await findVersion(ctx, model, id, a), await findVersion(ctx, model, id, b)];
  const shown = (v: Doc) => presentRecord(model, v.snapshot as Doc, view, record);
  const sa = byLocale(model, shown(va));
  const sb = byLocale(model, shown(vb));
  const localized = new Map(model.fields.filter((f) => f.localized).map((f) => [f.name, f.localized!.locales]));
  // A localized field compares per locale, as history records it.
  const fields = [...new Set([...Object.keys(sa), ...Object.keys(sb)])].flatMap((name) =>
    localized.has(name) ? localized.get(name)!.map((locale) => `${name}.${locale}`) : [name],
  );
  const changes = fields.map((field) => {
    const oldValue = valueAt(sa as Doc, field);
    const newValue = valueAt(sb as Doc, field);
    return { field, oldValue, newValue, changed: JSON.stringify(oldValue) !== JSON.stringify(newValue) };
  });
  const header = (v: Doc) => ({ version: v.version, createdAt: v.createdAt, changedBy: v.changedBy });
  return {
    entityId: id,
    versionA: header(va),
    versionB: header(vb),
    changes,
    totalChanges: changes.filter((c) => c.changed).length,
  };
}

/**
 * A snapshot's localized fields keyed by locale: one taken before a field became localized holds
 * a plain value, which is the default locale's (as the field's own column kept it).
 */
function byLocale(entity: EntityModel, snapshot: Doc): Doc {
  const out: Record<string, unknown> = { ...snapshot };
  for (const field of entity.fields) {
    const value = out[field.name];
    if (field.localized && value !== null && value !== undefined && typeof value !== 'object')
      out[field.name] = { [field.localized.defaultLocale]: value };
  }
  return out as Doc;
}

/** A localized value with every locale named, those it lacks as null: a write of it clears them. */
function everyLocale(locales: string[], value: unknown): Record<string, unknown> | null {
  if (!value || typeof value !== 'object') return null;
  return Object.fromEntries(locales.map((locale) => [locale, (value as Record<string, unknown>)[locale] ?? null]));
}

/**
 * What a revert may bring back: what a PATCH may set. Never the server's fields (id, owner,
 * tenant, timestamps, the archive's and the trash's marks: a revert moves no record into or out
 * of either) nor a readOnly or hidden one.
 */
const revertible = (field: FieldModel) => !field.hidden && !field.readOnly && !field.system;

/** POST /{plural}/{id}/revert/{version}: a new version whose snapshot equals the target; later versions stay. */
export async function revertToVersion(
  ctx: RuntimeContext,
  plural: string,
  id: string,
  version: number,
  caller: Caller,
  changeReason?: string,
) {
  const { model } = entityOf(ctx, plural);
  const { doc: current, where } = await findWritable(ctx, model, id, caller, 'edit');
  const target = await findVersion(ctx, model, id, version);
  const snapshot = byLocale(model, target.snapshot as Doc);
  // A revert brings back what the caller may set: fields they may not stay as they are (neither
  // set through the revert nor told whether they differ).
  const locked = lockedFields(model, caller, current);
  const restored = Object.fromEntries(
    model.fields
      .filter((f) => revertible(f) && !locked.has(f.name))
      .map((f) => [
        f.name,
        f.localized ? everyLocale(f.localized.locales, snapshot[f.name]) : (snapshot[f.name] ?? null),
      ]),
  );
  // A revert is an update: the references it brings back must be ones the caller may see now,
  // and the entity's rules and the content status moves hold, as for PATCH.
  const entity = await runWrite({
    ctx,
    entity: model,
    caller,
    operation: 'revert',
    changeReason: changeReason ?? `Reverted to version ${version}`,
    references: [{ values: restored }],
    rule: { update: { current, values: restored } },
    write: async ({ store, now, beforeUpdate }) => {
      const patch = await beforeUpdate(id, restored, current);
      const set = applyContentStatus(model, patch, current, now);
      const after = await store.update(
        plural,
        id,
        Object.assign(copyValues(set), { updatedAt: now.toISOString() }),
        where,
      );
      if (!after) throw notFound(model.name);
      return { result: after, changes: [{ changeType: 'update', event: 'reverted', before: current, after }] };
    },
  });
  const [latest] = await ctx.store.find(ENTITY_VERSIONS, {
    where: ofRecord(model, id),
    sort: [{ field: 'version', direction: 'desc' }],
    limit: 1,
  });
  return {
    success: true,
    revertedTo: version,
    newVersion: latest.version as number,
    entity: presentRecord(model, entity, fieldView(model, caller)),
  };
}

/** GET /{plural}/{id}/audit: newest first, `{ items, total, hasMore, nextCursor? }`. */
export async function listAudit(ctx: RuntimeContext, plural: string, id: string, caller: Caller, page: HistoryPage) {
  const { model } = entityOf(ctx, plural);
  const record = await requireHistoryAccess(ctx, model, id, caller);
  const all = ofRecord(model, id);
  const found = await ctx.store.find(AUDIT_LOGS, {
    where: all,
    sort: [{ field: 'id', direction: 'desc' }],
    limit: page.limit + 1,
    ...(page.before ? { after: String(page.before) } : {}),
  });
  const items = found.slice(0, page.limit).map((a) => auditView(model, a, caller, record));
  const hasMore = found.length > page.limit;
  return {
    items,
    total: await ctx.store.count(AUDIT_LOGS, { where: all }),
    hasMore,
    ...(hasMore ? { nextCursor: sealValue(ctx.secrets.signing, { h: items.at(-1)!.id }) } : {}),
  };
}

/** GET /{plural}/{id}/field-changes, optionally by fieldName and approvalStatus. */
export async function listFieldChanges(
  ctx: RuntimeContext,
  plural: string,
  id: string,
  caller: Caller,
  filter: { fieldName?: string; approvalStatus?: string },
) {
  const { model } = entityOf(ctx, plural);
  const record = await requireHistoryAccess(ctx, model, id, caller);
  const parts: Where[] = [ofRecord(model, id)];
  if (filter.fieldName) parts.push({ field: 'fieldName', op: 'eq', value: filter.fieldName });
  if (filter.approvalStatus) parts.push({ field: 'approvalStatus', op: 'eq', value: filter.approvalStatus });
  const found = await ctx.store.find(FIELD_CHANGES, {
    where: { and: parts },
    sort: [{ field: 'id', direction: 'desc' }],
    limit: 1000,
  });
  // A field's changes are its values: none of a field the caller may not see on this record.
  const view = fieldView(model, caller);
  return {
    items: found
      .filter((c) => seesField(view, rootOf(String(c.fieldName)), record))
      .map((c) => fieldChangeView(model, c)),
  };
}

export const FIELD_CHANGE_STATUSES = ['pending', 'approved', 'rejected'] as const;

/**
 * GET /field-changes: the tracked-field changes of every entity, newest first, for admins (the
 * approvals queue), optionally of one entity and one approval status. `{ items, total, hasMore,
 * nextCursor? }`; each item names its `entity`. Values of encrypted fields stay masked.
 */
export async function listAllFieldChanges(
  ctx: RuntimeContext,
  caller: Caller,
  filter: { entity?: string; approvalStatus?: (typeof FIELD_CHANGE_STATUSES)[number] },
  page: HistoryPage,
) {
  if (!caller.user) throw new ApiError('UNAUTHORIZED');
  if (!caller.isAdmin) throw new ApiError('FORBIDDEN', 'Only administrators see the field-change queue');
  const parts: Where[] = [];
  if (filter.entity) parts.push({ field: 'entity', op: 'eq', value: filter.entity });
  if (filter.approvalStatus) parts.push({ field: 'approvalStatus', op: 'eq', value: filter.approvalStatus });
  const where: Where | undefined = parts.length > 0 ? { and: parts } : undefined;
  const found = await ctx.store.find(FIELD_CHANGES, {
    ...(where ? { where } : {}),
    sort: [{ field: 'id', direction: 'desc' }],
    limit: page.limit + 1,
    ...(page.before ? { after: String(page.before) } : {}),
  });
  const items = found.slice(0, page.limit).flatMap((c) => {
    // A change of an entity no longer in the model is left out: its values cannot be masked.
    const model = ctx.registry.entities.get(String(c.entity))?.model;
    return model ? [{ entity: model.plural, ...fieldChangeView(model, c) }] : [];
  });
  const hasMore = found.length > page.limit;
  return {
    items,
    total: await ctx.store.count(FIELD_CHANGES, where ? { where } : {}),
    hasMore,
    ...(hasMore ? { nextCursor: sealValue(ctx.secrets.signing, { h: found[page.limit - 1].id }) } : {}),
  };
}

/** PUT /{plural}/{id}/field-changes/{changeId}: admins approve or reject a pending change; the entity is not touched. */
export async function decideFieldChange(
  ctx: RuntimeContext,
  plural: string,
  id: string,
  changeId: string,
  caller: Caller,
  decision: { approvalStatus: 'approved' | 'rejected'; approvedBy?: string },
) {
  const { model } = entityOf(ctx, plural);
  if (!caller.user) throw new ApiError('UNAUTHORIZED');
  if (!caller.isAdmin) throw new ApiError('FORBIDDEN', 'Only administrators decide on field changes');
  const change = /^[0-9a-f]{24}$/.test(changeId) ? await ctx.store.get(FIELD_CHANGES, changeId) : null;
  if (!change || change.entity !== model.plural || change.entityId !== id) throw notFound('Field change');
  const now = ctx.now().toISOString();
  const decided = await ctx.store.update(
    FIELD_CHANGES,
    changeId,
    { approvalStatus: decision.approvalStatus, approvedBy: decision.approvedBy ?? caller.user.id, updatedAt: now },
    { field: 'approvalStatus', op: 'eq', value: 'pending' },
  );
  if (!decided)
    throw new ApiError(
      'UNPROCESSABLE_ENTITY',
      `This change is already ${change.approvalStatus}; only pending changes can be decided`,
    );
  return fieldChangeView(model, decided);
}
