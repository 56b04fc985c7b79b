import { ROLES } from '../model/collections.js';
import type { AppModel } from '../model/types.js';
import type { StalenessBound } from '../store/countCache.js';
import type { Store } from '../store/types.js';
import { builtinRoles, entityRolePermissions, type RoleDefinition } from './builtinRoles.js';
import { SYSTEM_ADMIN } from './parsePermission.js';

export const ADMIN = 'ADMIN';

/**
 * Every role: built-ins from code and roles from the app's files, overridden by stored roles of
 * the same key, plus custom stored roles. Cached in memory; `invalidate()` after a role changes.
 */
export class RoleTable {
  private roles?: Promise<Map<string, RoleDefinition>>;
  /** The bus between instances: while it cannot vouch for the cache, every read loads the roles again. */
  trust?: StalenessBound;
  /** Permission sets by sorted role keys: resolved once per combination, not per request. */
  private readonly resolved = new Map<string, Set<string>>();
  private readonly builtins: Map<string, RoleDefinition>;
  private readonly fromEntities: Map<string, string[]>;

  constructor(
    readonly model: AppModel,
    private readonly store: Store,
  ) {
    this.builtins = builtinRoles(model);
    this.fromEntities = entityRolePermissions(model);
  }

  all(): Promise<Map<string, RoleDefinition>> {
    this.expireUntrusted();
    this.roles ??= this.load().catch((error) => {
      this.roles = undefined;
      throw error;
    });
    return this.roles;
  }

  /** Called after a role changes here, to tell other instances (Redis pub/sub when configured). */
  onChange?: () => void;

  /** Forgets every cached role; `broadcast` tells the other instances to do the same. */
  invalidate(broadcast = true): void {
    this.roles = undefined;
    this.resolved.clear();
    if (broadcast) this.onChange?.();
  }

  /** Union of the permissions of `keys`; everyone also holds ANONYMOUS's. Treat the result as read-only. */
  async permissionsOf(keys: readonly string[]): Promise<ReadonlySet<string>> {
    this.expireUntrusted();
    const cacheKey = [...keys].sort().join(',');
    const cached = this.resolved.get(cacheKey);
    if (cached) return cached;
    const roles = await this.all();
    const out = new Set<string>();
    for (const key of [...keys, 'ANONYMOUS'])
      for (const permission of roles.get(key)?.permissions ?? []) out.add(permission);
    if (this.roles) this.resolved.set(cacheKey, out);
    return out;
  }

  /** Another instance's change may be unheard: nothing cached is used. */
  private expireUntrusted(): void {
    if (this.trust && !this.trust.trusted) this.invalidate(false);
  }

  private async load(): Promise<Map<string, RoleDefinition>> {
    const roles = new Map(this.builtins);
    const stored = await this.store.find(ROLES, { sort: [{ field: 'id', direction: 'asc' }] });
    for (const role of stored) {
      const key = role.key as string;
      // ADMIN always holds system:admin, whatever a stored override says: no one can lock every admin out.
      const fixed = key === ADMIN ? [SYSTEM_ADMIN] : [];
      roles.set(key, {
        id: role.id,
        key,
        label: role.label as string,
        ...(role.description ? { description: role.description as string } : {}),
        permissions: [
          ...new Set([...fixed, ...((role.permissions as string[]) ?? []), ...(this.fromEntities.get(key) ?? [])]),
        ],
        isSystem: Boolean(role.isSystem),
        isBuiltin: this.builtins.get(key)?.isBuiltin ?? false,
        origin: 'stored',
      });
    }
    return roles;
  }
}
