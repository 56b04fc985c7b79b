import type { Caller } from './caller.js';

/** The write paths that run hooks; a hook can tell them apart by `operation`. */
export type WriteOperation =
  | 'create'
  | 'update'
  | 'increment'
  | 'archive'
  | 'restore'
  | 'revert'
  | 'delete'
  | 'trash'
  | 'untrash';

/**
 * Where a write came from, as its hooks are told: a client's request (`http`), a batch, an
 * import, an AI agent's tool (`mcp`), a custom endpoint's handler (`endpoint:escalate`), a job
 * (`job:<handler>`), an afterCommit hook (`afterCommit:<plural>`), a migration script (`script`).
 * Writes through a hook's repositories keep the origin of the write that ran the hook.
 */
export type WriteOrigin =
  | 'http'
  | 'batch'
  | 'import'
  | 'mcp'
  | 'script'
  | `endpoint:${string}`
  | `job:${string}`
  | `afterCommit:${string}`;

/** What the event log records of a committed write, as `<plural>.<event>`. */
export const CHANGE_EVENTS = [
  'created',
  'updated',
  'deleted',
  'archived',
  'restored',
  'incremented',
  'reverted',
  'trashed',
  'untrashed',
] as const;
export type ChangeEventName = (typeof CHANGE_EVENTS)[number];

/** Every before-hook gets these, inside the write's transaction. */
export interface HookContext<TRepositories> {
  caller: Caller;
  /** Typed repositories that write in the same transaction; their writes run that entity's hooks too. */
  repositories: TRepositories;
  /** The request's clock (the same instant as the record's timestamps). */
  now: Date;
  operation: WriteOperation;
  /** Where the write came from: a guard can let an endpoint's write through and stop a client's. */
  origin: WriteOrigin;
}

/** One committed change, as afterCommit receives it from the event log. */
export interface AfterCommitArgs<TRecord, TRepositories> {
  event: ChangeEventName;
  /** The event's place in the log: increasing in commit order. */
  seq: number;
  entity: string;
  id: string;
  /** The record after the change (null after a delete). */
  record: TRecord | null;
  /** The record before it (null for a create). */
  previous: TRecord | null;
  /**
   * Who made the change, as a Caller like every other hook's, with the user's roles and
   * permissions as they are now; no `user` for anonymous and system writes, and only the id
   * for a user deleted since.
   */
  caller: Caller;
  /** When the change committed (ISO 8601). */
  at: string;
  /** Typed repositories; each write is its own transaction and runs that entity's hooks. */
  repositories: TRepositories;
}

/** A before-hook returns the (possibly changed) data, or nothing when it changes nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: a hook that changes nothing may simply not return.
export type HookResult<T> = T | undefined | void | Promise<T | undefined | void>;

/**
 * An entity's lifecycle hooks. Before-hooks run in the write's transaction after validation,
 * defaults and macros; what they return is validated again. afterCommit runs after the commit,
 * at least once, from the durable event log.
 */
export interface EntityHooks<
  TRecord = Record<string, unknown>,
  TCreate = Record<string, unknown>,
  TUpdate = Record<string, unknown>,
  TRepositories = unknown,
> {
  beforeCreate?(args: HookContext<TRepositories> & { data: TCreate }): HookResult<TCreate>;
  beforeUpdate?(
    args: HookContext<TRepositories> & { id: string; data: TUpdate; existing: TRecord },
  ): HookResult<TUpdate>;
  beforeDelete?(args: HookContext<TRepositories> & { id: string; existing: TRecord }): void | Promise<void>;
  afterCommit?(args: AfterCommitArgs<TRecord, TRepositories>): void | Promise<void>;
}

/** A hook module's hooks as the runtime holds them: the hooks, and its endpoints' handlers by name. */
export interface LoadedHooks extends EntityHooks {
  endpoints?: Record<string, EndpointHandler>;
}

/** What a custom endpoint's handler gets; `id` and `record` for `/{id}/...` endpoints. */
export interface EndpointArgs<
  TRecord = Record<string, unknown>,
  TBody = Record<string, unknown> | undefined,
  TRepositories = unknown,
> {
  id: string;
  record: TRecord;
  body: TBody;
  caller: Caller;
  now: Date;
  /** Typed repositories writing in the endpoint's transaction (their entity's hooks run). */
  repositories: TRepositories;
  /**
   * A record as GET shows it to the caller (see PresentRecord). A `response: json` answer is
   * masked anyway, more strictly: fields under `access:` the caller may not see on every record
   * go from every object the handler did not show with `present`.
   */
  present: PresentRecord;
}

/**
 * Shows a stored record as GET does to the caller: hidden fields and fields the caller may not
 * see left out, encrypted values as `[ENCRYPTED]`. `plural` names its entity (the endpoint's own
 * by default).
 */
export type PresentRecord = <T extends object>(record: T, plural?: string) => Partial<T>;

/** A custom endpoint's handler: its answer is `{ data }` (a record for `response: record`). */
// biome-ignore lint/suspicious/noExplicitAny: handlers are typed per endpoint in generated/hooks.ts.
export type EndpointHandler = (args: any) => unknown;

export { HOOK_NAMES, type HookName } from '../model/hookNames.js';

/** What `defineHooks(plural, hooks)` returns: a hook module's default export. */
export interface HookModule {
  plural: string;
  hooks: EntityHooks<never, never, never, never>;
}

/** Hooks by entity plural, as the server loaded them. */
export type HookTable = ReadonlyMap<string, LoadedHooks>;
