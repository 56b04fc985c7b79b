import { createHash } from 'node:crypto';
import type { AppModel } from '../model/types.js';
import { API_ACCESS, SYSTEM_ADMIN } from './parsePermission.js';

export const BUILTIN_ROLE_KEYS = ['ADMIN', 'USER', 'API', 'ANONYMOUS', 'MODERATOR'] as const;

export interface RoleDefinition {
  id: string;
  key: string;
  label: string;
  description?: string;
  permissions: string[];
  isSystem: boolean;
  isBuiltin: boolean;
}

const DESCRIPTIONS: Record<string, [string, string]> = {
  ADMIN: ['Administrator', 'Grants everything'],
  USER: ['User', 'Views, creates and edits own records'],
  API: ['API', 'Programmatic access'],
  ANONYMOUS: ['Anonymous', 'Callers that are not signed in'],
  MODERATOR: ['Moderator', 'No permissions unless a role definition adds some'],
};

/**
 * The id of a built-in role: the same on every instance and every start (24 hex characters,
 * like every id), and kept by a stored override of that role.
 */
export function builtinRoleId(key: string): string {
  return createHash('sha256').update(`entigen:role:${key}`).digest('hex').slice(0, 24);
}

/** The roles defined in code: ADMIN, USER, API, ANONYMOUS, MODERATOR, with the model's per-entity permissions. */
export function builtinRoles(model: AppModel): Map<string, RoleDefinition> {
  const fromEntities = new Map<string, Set<string>>();
  for (const entity of model.entities) {
    for (const [role, permissions] of Object.entries(entity.rolePermissions)) {
      const set = fromEntities.get(role) ?? new Set<string>();
      for (const p of permissions) set.add(p);
      fromEntities.set(role, set);
    }
  }
  const roles = new Map<string, RoleDefinition>();
  for (const key of BUILTIN_ROLE_KEYS) {
    const base = key === 'ADMIN' ? [SYSTEM_ADMIN] : key === 'API' ? [API_ACCESS] : [];
    const [label, description] = DESCRIPTIONS[key];
    roles.set(key, {
      id: builtinRoleId(key),
      key,
      label,
      description,
      permissions: [...base, ...(fromEntities.get(key) ?? [])],
      isSystem: true,
      isBuiltin: true,
    });
  }
  return roles;
}

/** Permissions that entity files give to role keys other than the built-ins (custom roles). */
export function entityRolePermissions(model: AppModel): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const entity of model.entities) {
    for (const [role, permissions] of Object.entries(entity.rolePermissions)) {
      if ((BUILTIN_ROLE_KEYS as readonly string[]).includes(role)) continue;
      out.set(role, [...(out.get(role) ?? []), ...permissions]);
    }
  }
  return out;
}
