// The shapes of the API answers the console reads, taken from the route declarations the server
// validates and documents with (runtime/api/): one description, so they cannot drift apart.
import type { Static } from '@sinclair/typebox';
import type * as accounts from '../../runtime/api/accounts.js';
import type * as auth from '../../runtime/api/auth.js';
import type * as components from '../../runtime/api/components.js';
import type * as features from '../../runtime/api/features.js';
import type * as pages from '../../runtime/api/pages.js';
import type { ResponseOf } from '../../runtime/api/route.js';

export type Me = Static<typeof auth.Me>;
export type Session = Static<typeof auth.Session>;
export type MfaChallenge = Static<typeof auth.MfaChallenge>;
export type OidcProvider = ResponseOf<typeof auth.oidcProviders>['items'][number];
export type UserView = Static<typeof accounts.UserView>;
export type Role = Static<typeof accounts.Role>;
export type AvailablePermission = Static<typeof accounts.AvailablePermission>;
export type ApiKeyInfo = Static<typeof accounts.ApiKeyInfo>;
export type CreatedApiKey = Static<typeof accounts.CreatedApiKey>;
export type FieldMetadata = components.FieldMetadata;
export type EntityMetadata = Static<typeof components.EntityMetadata>;
export type Version = Static<typeof components.Version>;
export type VersionComparison = Static<typeof components.VersionComparison>;
export type AuditLog = Static<typeof components.AuditLog>;
/** A change of a tracked field; in the approvals queue it names its entity too. */
export type FieldChange = Static<typeof components.FieldChange> & { entity?: string };
export type ApprovalsQueue = ResponseOf<typeof features.fieldChangeQueue>;
export type ImportOutcome = Static<typeof features.ImportOutcome>;
export type HealthReport = Static<typeof pages.Health>;
