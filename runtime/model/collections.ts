/**
 * The collections the package itself ships (entities/builtin and entities/features), spelled
 * once. Runtime and generator code names a built-in collection only through these constants;
 * `collections.test.ts` holds each to a shipped entity file.
 */
export const USERS = 'users';
export const ROLES = 'roles';
export const API_KEYS = 'apiKeys';
export const SETTINGS = 'settings';
export const REVOKED_SESSIONS = 'revokedSessions';
export const PASSWORD_RESETS = 'passwordResets';
export const SIGN_IN_CODES = 'signInCodes';
export const EMAIL_TOKENS = 'emailTokens';
export const IDEMPOTENCY_RECORDS = 'idempotencyRecords';
export const ENTITY_VERSIONS = 'entityVersions';
export const AUDIT_LOGS = 'auditLogs';
export const FIELD_CHANGES = 'fieldChanges';
export const SCHEDULED_JOBS = 'scheduledJobs';
export const JOB_EXECUTIONS = 'jobExecutions';
export const JOB_SNAPSHOTS = 'jobSnapshots';
export const SCHEMA_MIGRATIONS = 'schemaMigrations';
export const GRANTS = 'grants';
export const MEDIA_ASSETS = 'mediaAssets';
export const CHANGE_EVENTS = 'changeEvents';
export const SEQUENCES = 'sequences';
export const EVENT_CURSORS = 'eventCursors';
export const HOOK_DELIVERIES = 'hookDeliveries';
export const WEBHOOKS = 'webhooks';
export const WEBHOOK_DELIVERIES = 'webhookDeliveries';
export const OUTGOING_MAILS = 'outgoingMails';

/** A scheduled job's run time limit when its record sets none (also the entity file's default). */
export const DEFAULT_JOB_TIMEOUT_MS = 300_000;
