import type { Router } from 'express';
import { accounts } from '../api/index.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../auth/apiKeyOperations.js';
import type { AuthContext } from '../auth/authContext.js';
import { DeclaredRouter } from './declaredRouter.js';
import { markSecretAnswer } from './idempotency.js';

export const API_KEYS_PATH = '/api/v1/apikeys';

/** /api/v1/apikeys: create (token shown once), list your keys, revoke. `{ data }` bodies. */
export function apiKeyRoutes(auth: AuthContext): Router {
  return new DeclaredRouter(API_KEYS_PATH)
    .json(accounts.createApiKey, async ({ caller, body, res }) => {
      const key = await createApiKey(auth, caller, body);
      markSecretAnswer(res);
      return { data: key };
    })
    .json(accounts.listApiKeys, async ({ caller }) => ({ data: await listApiKeys(auth, caller) }))
    .json(accounts.revokeApiKey, async ({ caller, params }) => ({
      data: await revokeApiKey(auth, caller, params.id),
    })).router;
}
