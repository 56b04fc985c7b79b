import { API_KEYS_CREATE, API_KEYS_DELETE, API_KEYS_VIEW } from '../access/accountPermissions.js';
import { requirePermission } from '../access/guards.js';
import { customActionsOf, parsePermission } from '../access/parsePermission.js';
import type { Caller } from '../context/caller.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { API_KEYS } from '../model/collections.js';
import { parseIsoDate } from '../model/parseIsoDate.js';
import type { Doc, Where } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';
import { maskToken, newApiKeyToken, tokenHash } from './apiKeyToken.js';
import type { AuthContext } from './authContext.js';

export const MAX_LIVE_KEYS = 50;

/** A new key: what POST /apikeys reads. */
export interface ApiKeyInput {
  name: string;
  permissions: string[];
  expiresAt: string;
  /** false keeps the key off the MCP server (default true). */
  mcp?: boolean;
}

/** The one answer that shows the token; it is never shown again. */
export interface MintedApiKey {
  id: string;
  name: string;
  token: string;
  lastEight: string;
  expiresAt: string;
  permissions: string[];
  mcp: boolean;
}

function keyView(key: Doc) {
  return {
    id: key.id,
    name: key.name as string,
    permissions: key.permissions as string[],
    expiresAt: key.expiresAt as string,
    lastEight: key.lastEight as string,
    createdAt: key.createdAt as string,
    lastUsedAt: (key.lastUsedAt as string | undefined) ?? null,
    mcp: key.mcp !== false,
  };
}

/**
 * Mints a key for the caller: permissions the caller holds, an expiry in the future (and, when
 * the caller is itself an API key, not after its own), at most MAX_LIVE_KEYS live keys.
 */
export async function createApiKey(auth: AuthContext, caller: Caller, input: ApiKeyInput): Promise<MintedApiKey> {
  const user = requirePermission(caller, API_KEYS_CREATE);
  const now = auth.ctx.now();
  const permissions = [...new Set(input.permissions)];
  const details: Record<string, string> = {};
  permissions.forEach((text, i) => {
    const parsed = parsePermission(text, customActionsOf(auth.ctx.registry.model));
    if (!parsed.ok) details[`permissions.${i}`] = `"${text}": ${parsed.reason}`;
  });
  const expires = parseIsoDate(input.expiresAt) ?? Number.NaN;
  if (Number.isNaN(expires)) details.expiresAt = 'must be an ISO 8601 date-time';
  else if (expires <= now.getTime()) details.expiresAt = 'must be in the future';
  if (Object.keys(details).length > 0) throw validationError(details);
  const beyond = permissions.filter((p) => !caller.isAdmin && !caller.permissions.has(p));
  if (beyond.length > 0)
    throw new ApiError('FORBIDDEN', `A key cannot hold permissions you do not have: ${beyond.join(', ')}`);
  const credential = caller.credential;
  if (credential?.kind === 'apiKey' && expires > Date.parse(credential.expiresAt)) {
    throw new ApiError('FORBIDDEN', 'A key made with an API key cannot outlive it', {
      expiresAt: `must not be later than ${credential.expiresAt}, when the API key making this request expires`,
    });
  }
  const live: Where = {
    and: [
      { field: 'ownerId', op: 'eq', value: user.id },
      { field: 'revokedAt', op: 'exists', value: false },
      { field: 'expiresAt', op: 'gt', value: now.toISOString() },
    ],
  };
  if ((await auth.ctx.store.count(API_KEYS, { where: live })) >= MAX_LIVE_KEYS) {
    throw new ApiError('UNPROCESSABLE_ENTITY', `You already have ${MAX_LIVE_KEYS} live API keys; revoke one first`);
  }
  const token = newApiKeyToken();
  const at = now.toISOString();
  const key = await auth.ctx.store.insert(API_KEYS, {
    id: newId(),
    ownerId: user.id,
    name: input.name.trim(),
    tokenHash: tokenHash(token),
    lastEight: maskToken(token),
    permissions,
    expiresAt: new Date(expires).toISOString(),
    mcp: input.mcp !== false,
    lastUsedAt: null,
    revokedAt: null,
    archivedAt: null,
    createdAt: at,
    updatedAt: at,
  });
  return {
    id: key.id,
    name: key.name as string,
    token,
    lastEight: key.lastEight as string,
    expiresAt: key.expiresAt as string,
    permissions,
    mcp: key.mcp !== false,
  };
}

/** The caller's keys that are not revoked (expired ones included: they show why a client fails). */
export async function listApiKeys(auth: AuthContext, caller: Caller) {
  const user = requirePermission(caller, API_KEYS_VIEW);
  const keys = await auth.ctx.store.find(API_KEYS, {
    where: {
      and: [
        { field: 'ownerId', op: 'eq', value: user.id },
        { field: 'revokedAt', op: 'exists', value: false },
      ],
    },
    limit: 500,
  });
  return { items: keys.map(keyView) };
}

/** Revokes one of the caller's keys (an admin: anyone's); others' keys are 404, not 403. */
export async function revokeApiKey(
  auth: AuthContext,
  caller: Caller,
  id: string,
): Promise<{ id: string; revoked: true }> {
  const user = requirePermission(caller, API_KEYS_DELETE);
  const key = /^[0-9a-f]{24}$/.test(id) ? await auth.ctx.store.get(API_KEYS, id) : null;
  if (!key || key.revokedAt || (key.ownerId !== user.id && !caller.isAdmin)) throw notFound('API key');
  const now = auth.ctx.now().toISOString();
  await auth.ctx.store.update(API_KEYS, id, { revokedAt: now, updatedAt: now });
  auth.ctx.notifyCredentialsChanged?.();
  return { id, revoked: true };
}
