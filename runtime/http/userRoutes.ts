import type { Router } from 'express';
import { accounts } from '../api/index.js';
import type { AuthContext } from '../auth/authContext.js';
import { resetMfa } from '../auth/mfa.js';
import { createAccount, listUsers, sendPasswordReset, updateUser, userView } from '../auth/userOperations.js';
import { DeclaredRouter } from './declaredRouter.js';

export const USERS_PATH = '/api/v1/users';

/**
 * /api/v1/users: GET (admin, limit + cursor), POST (admin), PUT /{id} (admin; or yourself for
 * displayName), POST /{id}/password-reset and /{id}/mfa/reset (admin). Bare bodies.
 */
export function userRoutes(auth: AuthContext): Router {
  return (
    new DeclaredRouter(USERS_PATH)
      .json(accounts.listUsers, ({ caller, query }) => listUsers(auth, caller, query))
      .json(accounts.createUser, ({ caller, body }) => createAccount(auth, caller, body))
      // The account's owner gets the password-reset mail; the token is never in this answer.
      .json(accounts.sendPasswordReset, async ({ caller, params }) => {
        await sendPasswordReset(auth, caller, params.id);
        return { success: true, message: 'A password-reset mail is on its way to the account' };
      })
      .json(accounts.updateUser, ({ caller, params, body }) => updateUser(auth, caller, params.id, body))
      // The account signs in with its password alone again; its owner is told by mail.
      .json(accounts.resetUserMfa, async ({ caller, params }) => userView(await resetMfa(auth, caller, params.id)))
      .router
  );
}
