// The signed-in session every view reads. It lives below the views (App.tsx composes them),
// so that no view imports the module that imports it.
import type { EntityMeta, Me } from './model.js';

/** What every signed-in view reads: the caller and the entities' metadata. */
export interface Session {
  me: Me;
  entities: EntityMeta[];
  entity(plural: string): EntityMeta | undefined;
  signOut(): Promise<void>;
  /** The tenant sent as x-tenant-id, or undefined for all of the caller's tenants. */
  tenant: string | undefined;
  pickTenant(id: string | undefined): void;
}
