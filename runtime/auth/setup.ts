import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { PASSWORD_RESETS, SETTINGS, USERS } from '../model/collections.js';
import { EMAIL_PATTERN, normalizeEmail } from '../model/patterns.js';
import type { Doc, Store } from '../store/types.js';
import { UniqueConflict } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';
import { endTokens } from './accountMail.js';
import { hashPassword, type PasswordPolicy, passwordProblem } from './passwords.js';
import { findUserByEmail } from './users.js';

export interface FirstAdminInput {
  email: string;
  password: string;
  name: string;
  /** Name of the first tenant record, when tenancy is configured. */
  tenantName?: string;
}

export async function hasAdmin(store: Store): Promise<boolean> {
  return (await store.count(USERS, { where: { field: 'roles', op: 'contains', value: ['ADMIN'] } })) > 0;
}

/**
 * Creates the first ADMIN (and the first tenant, with the admin in its member array). Exactly
 * one of several concurrent calls succeeds: a unique `setup` settings record is written in the
 * same transaction. Afterwards it answers 409.
 */
export async function createFirstAdmin(
  ctx: RuntimeContext,
  policy: PasswordPolicy,
  input: FirstAdminInput,
): Promise<Doc> {
  const tenancy = ctx.registry.model.tenancy;
  const details: Record<string, string> = {};
  const email = normalizeEmail(input.email ?? '');
  if (!EMAIL_PATTERN.test(email)) details.email = 'must be an email address';
  const problem = passwordProblem(input.password, policy);
  if (problem) details.password = problem;
  const name = (input.name ?? '').trim();
  if (!name || name.length > 200) details.name = 'must be 1 to 200 characters';
  const tenantName = (input.tenantName ?? '').trim();
  if (tenancy && (!tenantName || tenantName.length > 200)) details.tenantName = 'must be 1 to 200 characters';
  if (Object.keys(details).length > 0) throw validationError(details);
  const passwordHash = await hashPassword(input.password);
  const now = ctx.now().toISOString();
  try {
    return await ctx.store.transaction(async (tx) => {
      if (await hasAdmin(tx)) throw new ApiError('CONFLICT', 'Setup is already done: an administrator exists');
      await tx.insert(SETTINGS, {
        id: newId(),
        key: 'setup',
        value: { completedAt: now, email },
        createdAt: now,
        updatedAt: now,
      });
      const admin = await tx.insert(USERS, {
        id: newId(),
        email,
        displayName: name,
        passwordHash,
        roles: ['ADMIN'],
        authSource: 'local',
        disabled: false,
        createdAt: now,
        updatedAt: now,
      });
      if (tenancy) {
        const tenant = ctx.registry.entities.get(tenancy.entity)!.model;
        const label = tenant.fields.find((f) => f.required && f.type === 'string' && !f.system)?.name ?? 'name';
        await tx.insert(tenancy.entity, {
          id: newId(),
          [label]: tenantName,
          [tenancy.membersField]: [admin.id],
          ...(tenant.ownership === 'owned' ? { ownerId: admin.id, archivedAt: null } : {}),
          createdAt: now,
          updatedAt: now,
        });
      }
      return admin;
    });
  } catch (error) {
    if (error instanceof UniqueConflict)
      throw new ApiError('CONFLICT', 'Setup is already done: an administrator exists');
    throw error;
  }
}

/** Remembers once an admin exists; until then asks the store, so an admin made by `entigen setup` is noticed at once. */
export class SetupState {
  private done = false;
  constructor(private readonly store: Store) {}

  /** True once an administrator is known to exist (it never goes back). */
  get known(): boolean {
    return this.done;
  }

  async isDone(): Promise<boolean> {
    if (!this.done) this.done = await hasAdmin(this.store);
    return this.done;
  }

  markDone(): void {
    this.done = true;
  }
}

export interface RecoverAdminInput {
  email: string;
  password: string;
  name?: string;
}

/**
 * `entigen recover-admin`: whatever locked the administrators out (lost password, an account
 * linked to an LDAP server that is gone, a disabled account), the account with this email
 * becomes an enabled local ADMIN with this password, and its earlier sessions end. Without
 * such an account, one is created. Needs shell access to the store, nothing over HTTP.
 */
export async function recoverAdmin(
  ctx: RuntimeContext,
  policy: PasswordPolicy,
  input: RecoverAdminInput,
): Promise<{ user: Doc; created: boolean }> {
  const email = normalizeEmail(input.email ?? '');
  const details: Record<string, string> = {};
  if (!EMAIL_PATTERN.test(email)) details.email = 'must be an email address';
  const problem = passwordProblem(input.password, policy);
  if (problem) details.password = problem;
  if (Object.keys(details).length > 0) throw validationError(details);
  const passwordHash = await hashPassword(input.password);
  const now = ctx.now().toISOString();
  const existing = await findUserByEmail(ctx.store, email);
  if (!existing) {
    const user = await ctx.store.insert(USERS, {
      id: newId(),
      email,
      displayName: (input.name ?? 'Administrator').trim() || 'Administrator',
      passwordHash,
      roles: ['ADMIN'],
      authSource: 'local',
      disabled: false,
      createdAt: now,
      updatedAt: now,
    });
    return { user, created: true };
  }
  const roles = [...new Set([...((existing.roles as string[] | undefined) ?? []), 'ADMIN'])];
  const user = await ctx.store.update(USERS, existing.id, {
    passwordHash,
    roles,
    authSource: 'local',
    ldapDn: null,
    disabled: false,
    sessionsValidAfter: now,
    updatedAt: now,
  });
  await endTokens(ctx.store, PASSWORD_RESETS, existing.id, now);
  return { user: user!, created: false };
}
