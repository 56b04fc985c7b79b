// What the caller may do, read from /auth/me's permissions in the permission grammar (docs/concepts/access.md)
// (`entity:action[:field:value][:scope]`, `system:admin`). It only decides what the console
// offers; the server decides what happens, and its 403 is shown as it comes.

import type { Me } from './model.js';

export type Action = 'view' | 'create' | 'edit' | 'delete' | 'purge';

export function isAdmin(me: Me): boolean {
  return me.permissions.includes('system:admin') || me.roles.includes('ADMIN');
}

/** Whether any permission lets the caller `action` some records of `plural` (a custom endpoint's action too). */
export function can(me: Me, plural: string, action: Action | (string & {})): boolean {
  if (isAdmin(me)) return true;
  return me.permissions.some((permission) => {
    const [entity, granted] = permission.split(':');
    return entity === plural && granted === action;
  });
}
