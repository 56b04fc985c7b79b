import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { validationError } from '../errors/apiError.js';
import type { EntityModel } from '../model/types.js';
import { type CompiledValidator, validationDetails } from '../model/validationDetails.js';
import type { Doc } from '../store/types.js';
import {
  applyContentStatus,
  applyDefaults,
  copyValues,
  encryptFields,
  newId,
  normalizeDates,
  resolveMacros,
} from './prepareWrite.js';

/** A validated create body with its defaults and macros: what beforeCreate hooks see. */
export function newRecordValues(
  entity: EntityModel,
  body: Record<string, unknown>,
  caller: Caller,
  now: Date,
): Record<string, unknown> {
  return resolveMacros(applyDefaults(entity, body), caller, now);
}

/**
 * Values (after defaults, macros and hooks) turned into the document to store: content status,
 * dates, encryption, then the server-set fields (id, ownerId, tenantId, timestamps).
 */
export function buildNewRecord(
  entity: EntityModel,
  values: Record<string, unknown>,
  caller: Caller,
  ctx: RuntimeContext,
  now: Date,
  tenantId?: string | null,
): Doc {
  values = applyContentStatus(entity, values, undefined, now);
  values = encryptFields(entity, normalizeDates(entity, values), ctx.cipher);
  const stamp = now.toISOString();
  const doc = copyValues(values) as Doc;
  doc.id = newId();
  doc.createdAt = stamp;
  doc.updatedAt = stamp;
  if (entity.ownership === 'owned') {
    doc.ownerId = caller.user!.id;
    doc.archivedAt = null;
  }
  if (entity.tenantScoped) doc.tenantId = tenantId ?? null;
  return doc;
}

/** Checks a body against a compiled validator; every bad field is reported, under `prefix` for bulk items. */
export function validateBody(
  validate: CompiledValidator,
  body: unknown,
  prefix = '',
): Record<string, string> | undefined {
  if (validate(body)) return undefined;
  return validationDetails(validate.errors ?? [], prefix);
}

export function requireValid(validate: CompiledValidator, body: unknown): Record<string, unknown> {
  const details = validateBody(validate, body);
  if (details) throw validationError(details);
  return body as Record<string, unknown>;
}
