import type { Router } from 'express';
import { accounts } from '../api/index.js';
import type { AuthContext } from '../auth/authContext.js';
import { availablePermissions, createRole, deleteRole, listRoles, updateRole } from '../auth/roleOperations.js';
import { DeclaredRouter } from './declaredRouter.js';

export const ROLES_PATH = '/api/v1/roles';

/** /api/v1/roles (admin): list, available permissions, create, edit and delete stored roles. Bare bodies. */
export function roleRoutes(auth: AuthContext): Router {
  return new DeclaredRouter(ROLES_PATH)
    .json(accounts.listRoles, async ({ caller }) => ({ items: await listRoles(auth, caller) }))
    .json(accounts.availablePermissions, ({ caller }) => availablePermissions(auth, caller))
    .json(accounts.createRole, ({ caller, body }) => createRole(auth, caller, body))
    .json(accounts.updateRole, ({ caller, params, body }) => updateRole(auth, caller, params.key, body))
    .json(accounts.deleteRole, ({ caller, params }) => deleteRole(auth, caller, params.key)).router;
}
