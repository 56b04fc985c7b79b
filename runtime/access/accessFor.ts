import type { Caller } from '../context/caller.js';
import type { Action, EntityModel } from '../model/types.js';
import type { Where } from '../store/types.js';
import { type Permission, parsePermission, SYSTEM_ADMIN } from './parsePermission.js';
import { callerValueOf } from './permissionCondition.js';

/** Allowed, with the records it applies to; `where` undefined means every record. */
export type Access = { allowed: false } | { allowed: true; where?: Where };

const parsed = new Map<string, Permission | null>();

function parseCached(text: string): Permission | null {
  let permission = parsed.get(text);
  if (permission === undefined) {
    // Stored permissions were checked against the model when they were written.
    const result = parsePermission(text, 'any');
    permission = result.ok ? result.permission : null;
    parsed.set(text, permission);
  }
  return permission;
}

/**
 * Layer 1 and 2 of the spec: the caller's permissions for `action` on `entity`, turned into a
 * query constraint. Permissions OR together; `own` adds ownerId = caller; a field condition
 * adds field = value (the caller's own id or email for `{{user.id}}` / `{{user.email}}`; an
 * array field contains it); `@field` adds "references a record the caller may view", its inner
 * constraint left pending for viewScopes() (runtime/access/throughRules.ts) to fill in.
 * `system:admin` bypasses everything.
 */
export function accessFor(caller: Caller, entity: EntityModel, action: Action | string): Access {
  if (caller.isAdmin || caller.permissions.has(SYSTEM_ADMIN)) return { allowed: true };
  const alternatives: Where[] = [];
  for (const text of caller.permissions) {
    const permission = parseCached(text);
    if (
      !permission ||
      permission.field !== undefined ||
      permission.entity !== entity.plural ||
      permission.action !== action
    )
      continue;
    const parts: Where[] = [];
    if (permission.through) {
      const field = entity.fields.find((f) => f.name === permission.through);
      const collection = field?.ref ?? field?.items?.ref;
      if (!field || !collection) continue;
      parts.push({ through: { field: field.name, collection, viewScopePending: true } });
    }
    if (permission.scope === 'own') {
      if (!caller.user || entity.ownership !== 'owned') continue;
      parts.push({ field: 'ownerId', op: 'eq', value: caller.user.id });
    }
    if (permission.condition) {
      const condition = conditionFor(caller, entity, permission.condition);
      if (!condition) continue;
      parts.push(condition);
    }
    if (parts.length === 0) return { allowed: true };
    alternatives.push(parts.length === 1 ? parts[0] : { and: parts });
  }
  if (alternatives.length === 0) return { allowed: false };
  return { allowed: true, where: alternatives.length === 1 ? alternatives[0] : { or: alternatives } };
}

/**
 * `field:value` as a query condition: the value typed for the field, or the caller's own value
 * for `{{user.id}}` / `{{user.email}}` (nothing matches without a signed-in caller, nor
 * `{{user.email}}` while nobody proved the caller's address). An array
 * field matches when it contains the value.
 */
function conditionFor(caller: Caller, entity: EntityModel, condition: { field: string; value: string }): Where | null {
  const field = entity.fields.find((f) => f.name === condition.field);
  if (!field) return null;
  const macro = callerValueOf(condition.value);
  let value: unknown;
  if (macro) {
    // An address nobody proved is not the caller's to claim: anyone can register any address.
    if (macro === 'email' && caller.user?.emailVerified === false) return null;
    value = caller.user?.[macro];
    if (typeof value !== 'string') return null;
  } else if (condition.value.includes('{{')) return null;
  else value = typedValue(field.type === 'array' ? (field.items?.type ?? 'string') : field.type, condition.value);
  return field.type === 'array' ? { field: field.name, op: 'contains', value } : { field: field.name, op: 'eq', value };
}

function typedValue(type: string, text: string): unknown {
  if (type === 'boolean') return text === 'true';
  if (type === 'int' || type === 'float') return Number(text);
  return text;
}

/** Both constraints at once (either may be absent). */
export function andWhere(...parts: (Where | undefined)[]): Where | undefined {
  const present = parts.filter((p): p is Where => p !== undefined);
  if (present.length === 0) return undefined;
  return present.length === 1 ? present[0] : { and: present };
}
