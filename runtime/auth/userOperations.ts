import { ACCOUNT_EDIT } from '../access/accountPermissions.js';
import { requireAdmin, requirePermission, requireUser } from '../access/guards.js';
import type { Caller } from '../context/caller.js';
import { openSealedValue, sealValue } from '../crypto/signedToken.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { USERS } from '../model/collections.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../query/listQuery.js';
import type { Doc, Where } from '../store/types.js';
import { createUser, mailPasswordReset } from './accounts.js';
import type { AuthContext } from './authContext.js';

/** A change of an account: what PUT /users/{id} reads. */
export interface UserChange {
  displayName?: string | null;
  roles?: string[] | null;
  disabled?: boolean | null;
  authSource?: 'local' | 'ldap' | null;
  ldapDn?: string | null;
}

/** A page of GET /users: the raw query values, checked here. */
export interface UserPageRequest {
  limit?: unknown;
  cursor?: unknown;
  /** Text the email or the display name contains (a picker's search). */
  q?: unknown;
  /** Only these accounts: ids, comma-separated (a client labelling references). */
  id?: unknown;
}

/** The most ids one GET /users?id= names, and the longest `q`. */
export const MAX_USER_IDS = 100;
export const MAX_USER_QUERY = 100;

export type UserView = ReturnType<typeof userView>;

/** A user as the user endpoints show it: never a password hash. */
export function userView(user: Doc) {
  return {
    id: user.id,
    email: user.email as string,
    displayName: user.displayName as string,
    roles: (user.roles as string[] | undefined) ?? [],
    authSource: (user.authSource as 'local' | 'ldap' | undefined) ?? 'local',
    ldapDn: (user.ldapDn as string | undefined) ?? null,
    disabled: user.disabled === true,
    createdAt: user.createdAt as string,
    updatedAt: user.updatedAt as string,
    lastLoginAt: (user.lastLoginAt as string | undefined) ?? null,
    mfaEnabled: typeof user.mfaEnabledAt === 'string',
  };
}

/** Every account, by id, a page at a time behind a sealed cursor (admins). */
const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

/** `q` and `id` of GET /users as conditions, each checked; undefined when neither is given. */
function userConditions(request: UserPageRequest): Where | undefined {
  const conditions: Where[] = [];
  if (request.q !== undefined) {
    if (typeof request.q !== 'string' || request.q.length > MAX_USER_QUERY)
      throw validationError({ q: `must be text of at most ${MAX_USER_QUERY} characters` });
    const text = request.q.trim();
    if (text)
      conditions.push({
        or: [
          { field: 'email', op: 'textContains', value: text },
          { field: 'displayName', op: 'textContains', value: text },
        ],
      });
  }
  if (request.id !== undefined) {
    const ids = typeof request.id === 'string' ? [...new Set(request.id.split(',').map((id) => id.trim()))] : [];
    if (ids.length === 0 || ids.length > MAX_USER_IDS || !ids.every((id) => OBJECT_ID.test(id)))
      throw validationError({ id: `must be 1 to ${MAX_USER_IDS} ids of 24 hexadecimal characters, comma-separated` });
    conditions.push({ field: 'id', op: 'in', value: ids });
  }
  return conditions.length === 0 ? undefined : conditions.length === 1 ? conditions[0] : { and: conditions };
}

export async function listUsers(
  auth: AuthContext,
  caller: Caller,
  request: UserPageRequest,
): Promise<{ items: UserView[]; nextCursor?: string }> {
  requireAdmin(caller);
  const limit = request.limit === undefined ? DEFAULT_PAGE_SIZE : Number(request.limit);
  if (typeof request.limit === 'object' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw validationError({ limit: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
  }
  let after: string | undefined;
  if (request.cursor !== undefined) {
    const opened =
      typeof request.cursor === 'string'
        ? (openSealedValue(auth.ctx.secrets.signing, request.cursor) as { u?: unknown } | undefined)
        : undefined;
    if (typeof opened?.u !== 'string') throw validationError({ cursor: 'is not a valid cursor' });
    after = opened.u;
  }
  const where = userConditions(request);
  const found = await auth.ctx.store.find(USERS, {
    ...(where ? { where } : {}),
    sort: [{ field: 'id', direction: 'asc' }],
    after,
    limit: limit + 1,
  });
  const items = found.slice(0, limit).map(userView);
  return {
    items,
    ...(found.length > limit ? { nextCursor: sealValue(auth.ctx.secrets.signing, { u: items.at(-1)!.id }) } : {}),
  };
}

/** Admins change any account; a user changes only their own display name. */
export async function updateUser(auth: AuthContext, caller: Caller, id: string, change: UserChange): Promise<UserView> {
  const me = requireUser(caller);
  if (!caller.isAdmin) {
    if (id !== me.id) throw new ApiError('FORBIDDEN', 'You may change only your own account');
    requirePermission(caller, ACCOUNT_EDIT);
    if (
      change.roles !== undefined ||
      change.disabled !== undefined ||
      change.authSource !== undefined ||
      change.ldapDn !== undefined
    ) {
      throw new ApiError('FORBIDDEN', 'Only administrators change roles, sign-in sources or disable accounts');
    }
  }
  const { store } = auth.ctx;
  const user = /^[0-9a-f]{24}$/.test(id) ? await store.get(USERS, id) : null;
  if (!user) throw notFound('User');
  const set: Record<string, unknown> = { updatedAt: auth.ctx.now().toISOString() };
  if (typeof change.displayName === 'string') set.displayName = change.displayName.trim();
  if (change.disabled !== undefined) set.disabled = change.disabled;
  Object.assign(set, await signInSourceChange(auth, user, change));
  if (change.roles) {
    const roles = [...new Set(change.roles)];
    const known = await auth.roles.all();
    const unknown = roles.filter((key) => !known.has(key));
    if (unknown.length > 0) throw validationError({ roles: `unknown role ${unknown.join(', ')}` });
    set.roles = roles;
  }
  const losesAdmin = set.disabled === true || (set.roles && !(set.roles as string[]).includes('ADMIN'));
  if (((user.roles as string[]) ?? []).includes('ADMIN') && losesAdmin) {
    const activeAdmins: Where = {
      and: [
        { field: 'roles', op: 'contains', value: ['ADMIN'] },
        { field: 'disabled', op: 'ne', value: true },
      ],
    };
    if ((await store.count(USERS, { where: activeAdmins })) <= 1) {
      throw new ApiError('UNPROCESSABLE_ENTITY', 'The last administrator cannot lose the ADMIN role or be disabled');
    }
  }
  const updated = (await store.update(USERS, id, set))!;
  // Disabled or with other roles: the user's open streams see it at once.
  if (set.disabled !== undefined || set.roles) auth.ctx.notifyCredentialsChanged?.();
  return userView(updated);
}

/**
 * An admin links an account to LDAP (`authSource: ldap`, optionally the entry's `ldapDn`; its
 * password is removed, LDAP is then its only way in) or back to a local password account
 * (which then needs a password reset).
 */
async function signInSourceChange(auth: AuthContext, user: Doc, change: UserChange): Promise<Record<string, unknown>> {
  const source = change.authSource ?? (user.authSource as string);
  if (source === 'local') {
    if (change.ldapDn !== undefined)
      throw validationError({ ldapDn: 'is only for accounts that sign in through LDAP' });
    return change.authSource === 'local' ? { authSource: 'local', ldapDn: null } : {};
  }
  if (change.authSource === undefined && change.ldapDn === undefined) return {};
  const ldapDn =
    change.ldapDn?.trim() ?? (change.authSource === 'ldap' && user.authSource === 'ldap' ? user.ldapDn : null) ?? null;
  if (ldapDn) {
    const [holder] = await auth.ctx.store.find(USERS, {
      where: { field: 'ldapDn', op: 'eq', value: ldapDn },
      limit: 1,
    });
    if (holder && holder.id !== user.id)
      throw new ApiError('CONFLICT', 'Another account is linked to this LDAP entry', {
        ldapDn: 'is linked to another account',
      });
  }
  return { authSource: 'ldap', ldapDn, passwordHash: null };
}

/** What POST /users reads. */
export interface NewAccount {
  email: string;
  displayName: string;
  roles?: string[];
  authSource?: 'local' | 'ldap';
  ldapDn?: string;
  password?: string;
}

/**
 * Admins create an account. A local account made without a password gets the password-reset
 * mail, so its owner sets one (nobody else learns it); an LDAP account signs in through LDAP.
 */
export async function createAccount(auth: AuthContext, caller: Caller, input: NewAccount): Promise<UserView> {
  requireUser(caller);
  requireAdmin(caller);
  const roles = [...new Set(input.roles ?? ['USER'])];
  const known = await auth.roles.all();
  const unknown = roles.filter((key) => !known.has(key));
  if (unknown.length > 0) throw validationError({ roles: `unknown role ${unknown.join(', ')}` });
  const authSource = input.authSource ?? 'local';
  if (authSource === 'ldap' && input.password !== undefined)
    throw validationError({ password: 'is not kept for accounts that sign in through LDAP' });
  if (authSource === 'local' && input.ldapDn !== undefined)
    throw validationError({ ldapDn: 'is only for accounts that sign in through LDAP' });
  const user = await createUser(auth, { ...input, roles, authSource });
  if (authSource === 'local' && input.password === undefined) await mailPasswordReset(auth, user);
  return userView(user);
}

/** Admins send an account the password-reset mail (the token goes to its owner only). */
export async function sendPasswordReset(auth: AuthContext, caller: Caller, id: string): Promise<void> {
  requireUser(caller);
  requireAdmin(caller);
  const user = /^[0-9a-f]{24}$/.test(id) ? await auth.ctx.store.get(USERS, id) : null;
  if (!user) throw notFound('User');
  if (user.authSource !== 'local')
    throw new ApiError(
      'UNPROCESSABLE_ENTITY',
      'This account signs in elsewhere (LDAP or OpenID): it has no password here',
    );
  if (user.disabled === true) throw new ApiError('UNPROCESSABLE_ENTITY', 'This account is disabled');
  await mailPasswordReset(auth, user);
}
