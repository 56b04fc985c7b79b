import type { Caller } from '../context/caller.js';
import { rulesFor } from '../context/entityRules.js';
import type { WriteOperation } from '../context/hookTypes.js';
import type { RepositoryScope, RuntimeContext } from '../context/runtimeContext.js';
import type { EntityModel } from '../model/types.js';
import type { RepositoryWriter } from '../repository.js';
import type { Doc, Store } from '../store/types.js';
import { checkReferences, type ReferencingValues } from './checkReferences.js';
import { appendEvents, isLogged } from './eventLog.js';
import { type Change, eventOf, hasHistory, recordChange } from './recordChange.js';
import { applyReferentialActions } from './referentialActions.js';
import {
  checkServerSet,
  HookFailed,
  MAX_HOOK_DEPTH,
  runBeforeCreate,
  runBeforeDelete,
  runBeforeUpdate,
  type WriteScope,
  writeScope,
} from './runHooks.js';
import { storeWrite } from './storeWrite.js';

/**
 * The stages every write to an entity passes, in this order. Every operation that writes (create,
 * bulk, update, increment, archive, the trash's, delete, revert, import, the repositories hooks
 * and jobs write with) is a plan for `runWrite`; none spells the sequence itself.
 */
export const WRITE_STAGES = [
  /** Outside the transaction: the references must be ones the caller may see; the features' rules. */
  'prepare',
  /** In the transaction: the application's before-hook for the operation, its answer validated. */
  'beforeHooks',
  /** The plan's own write; a unique value already taken answers 409. */
  'storeWrite',
  /** A delete first refuses, clears or deletes what references the record (`onDelete`). */
  'referentialActions',
  /** Entity versions, field changes and the audit log, with their retention. */
  'history',
  /** The change events, numbered in commit order. */
  'eventLog',
  /** After the commit: the commit notice, the features' after-delete rule. */
  'after',
] as const;

/** The features' rule (`ctx.rules`) a write passes before its transaction, with what it writes. */
export type FeatureRule =
  | { create: Record<string, unknown>[] }
  | { update: { current: Doc; values: Record<string, unknown> } }
  | { remove: Doc }
  /** A delete that keeps the record (into the trash): the before-delete rule alone. */
  | { trash: Doc };

export interface WritePlan<T> {
  ctx: RuntimeContext;
  entity: EntityModel;
  caller: Caller;
  /** What the application's hooks are told the write is. */
  operation: WriteOperation;
  changeReason?: string;
  /** prepare: the values whose references the caller must be allowed to see. */
  references?: ReferencingValues[];
  /** prepare: the features' rule; a `remove` also runs their after-delete rule on the record deleted. */
  rule?: FeatureRule;
  /** The clock of the write (default: the context's, once). */
  now?: Date;
  /** history: who is named as the writer when it is not the caller (`import`). */
  changedBy?: string;
  /** eventLog: false leaves the write out of the event log (an import that runs no hooks). */
  logged?: boolean;
  /** A write made on behalf of another (a hook's repository, a cascade): its depth and path. */
  within?: RepositoryScope;
  /** beforeHooks, storeWrite and referentialActions, through the step: the result and what changed. */
  write(step: WriteStep): Promise<{ result: T; changes: Change[] }>;
}

/** What a plan's write is handed: the transaction and the stages it runs inside it. */
export interface WriteStep {
  /** The transaction's store (the context's own for entities that keep neither history nor log). */
  store: Store;
  now: Date;
  scope: WriteScope;
  beforeCreate(values: Record<string, unknown>): Promise<Record<string, unknown>>;
  beforeUpdate(id: string, patch: Record<string, unknown>, before: Doc): Promise<Record<string, unknown>>;
  beforeDelete(id: string, before: Doc): Promise<void>;
  referentialActions(id: string): Promise<void>;
}

/** Runs a write through every stage; all of it commits, or none does. */
export async function runWrite<T>(plan: WritePlan<T>): Promise<T> {
  const { ctx, entity, caller } = plan;
  const rules = rulesFor(ctx, entity.plural);
  // prepare
  if (plan.references) await checkReferences(ctx, caller, entity, plan.references);
  const rule = plan.rule;
  if (rule && 'create' in rule) for (const values of rule.create) await rules?.beforeCreate?.(ctx, caller, values);
  if (rule && 'update' in rule) await rules?.beforeUpdate?.(ctx, caller, rule.update.current, rule.update.values);
  if (rule && 'remove' in rule) await rules?.beforeRemove?.(ctx, caller, rule.remove);
  if (rule && 'trash' in rule) await rules?.beforeRemove?.(ctx, caller, rule.trash);
  const now = plan.now ?? ctx.now();
  const result = await storeWrite(entity, () => inTransaction(plan, now));
  // after
  if (rule && 'remove' in rule) rules?.afterRemove?.(result as Doc);
  return result;
}

/** beforeHooks, storeWrite, referentialActions, history and eventLog: one transaction, then the notice. */
async function inTransaction<T>(plan: WritePlan<T>, now: Date): Promise<T> {
  const { ctx, entity, caller } = plan;
  const logged = plan.logged !== false && isLogged(entity);
  if (!hasHistory(entity) && !logged) return (await plan.write(stepIn(plan, ctx.store, now))).result;
  const result = await ctx.store.transaction(async (tx) => {
    const { result, changes } = await plan.write(stepIn(plan, tx, now));
    const context = {
      changedBy: plan.changedBy ?? caller.user?.id ?? 'anonymous',
      changedFrom: caller.address,
      changeReason: plan.changeReason,
    };
    if (hasHistory(entity)) for (const change of changes) await recordChange(tx, ctx, entity, change, context);
    if (logged) {
      const entries = changes.map((change) => ({
        event: eventOf(change),
        id: (change.after?.id ?? change.before?.id) as string,
        before: change.before,
        after: change.after,
      }));
      await appendEvents(tx, entity, entries, caller, ctx.now());
    }
    return result;
  });
  ctx.notifyCommitted?.(entity.plural);
  return result;
}

function stepIn<T>(plan: WritePlan<T>, store: Store, now: Date): WriteStep {
  const plural = plan.entity.plural;
  const ctx = { ...plan.ctx, store };
  const scope: WriteScope = plan.within
    ? { ...plan.within, ctx, operation: plan.operation }
    : writeScope(ctx, plan.caller, now, plan.operation);
  return {
    store,
    now,
    scope,
    beforeCreate: (values) => runBeforeCreate(scope, plural, values),
    beforeUpdate: (id, patch, before) => runBeforeUpdate(scope, plural, id, patch, before),
    beforeDelete: (id, before) => runBeforeDelete(scope, plural, id, before),
    referentialActions: (id) => applyReferentialActions(scope, repositoryWriter(nested(scope, plural)), plural, id),
  };
}

/**
 * Repository writes as the runtime hands them out (to hooks, jobs, afterCommit hooks, and to a
 * delete's referential actions): each a plan for `runWrite` in the scope's transaction (or a new
 * one), without the caller's access, references or the features' rules: the code that writes
 * decides. `scopeOf` gives the scope at the time of the write (jobs take a fresh clock).
 */
export function repositoryWriter(scopeOf: () => RepositoryScope): RepositoryWriter {
  const write = async <T>(
    plural: string,
    operation: WriteOperation,
    run: (step: WriteStep) => Promise<{ result: T; changes: Change[] }>,
  ): Promise<T> => {
    const base = scopeOf();
    if (base.depth > MAX_HOOK_DEPTH) {
      const chain = [...base.path, plural].join(' -> ');
      throw new HookFailed(
        plural,
        'beforeCreate',
        `writes through hook repositories nest deeper than ${MAX_HOOK_DEPTH} levels: ${chain}`,
      );
    }
    const registered = base.ctx.registry.entities.get(plural);
    if (!registered) throw new Error(`unknown entity ${plural}`);
    return runWrite({
      ctx: base.ctx,
      entity: registered.model,
      caller: base.caller,
      operation,
      now: base.now,
      within: base,
      write: run,
    });
  };
  return {
    create: (plural, data, system) =>
      write(plural, 'create', async (step) => {
        checkServerSet(step.scope.ctx, plural, data, 'create');
        const values = await step.beforeCreate(data);
        const after = await step.store.insert(plural, { ...values, ...system } as Doc);
        return { result: after, changes: [{ changeType: 'create', after }] };
      }),
    update: (plural, id, data, system) =>
      write(plural, 'update', async (step) => {
        checkServerSet(step.scope.ctx, plural, data, 'update');
        const before = await step.store.get(plural, id);
        if (!before) return { result: null, changes: [] };
        const patch = await step.beforeUpdate(id, data, before);
        const after = await step.store.update(plural, id, { ...patch, ...system });
        return { result: after, changes: after ? [{ changeType: 'update', before, after }] : [] };
      }),
    increment: (plural, id, by, system) =>
      write(plural, 'increment', async (step) => {
        const before = await step.store.get(plural, id);
        if (!before) return { result: null, changes: [] };
        let after = await step.store.increment(plural, id, by, system);
        if (!after) return { result: null, changes: [] };
        const resulting = Object.fromEntries(Object.keys(by).map((name) => [name, after![name]]));
        const patch = await step.beforeUpdate(id, resulting, before);
        const changed = Object.fromEntries(Object.entries(patch).filter(([name, value]) => resulting[name] !== value));
        if (Object.keys(changed).length > 0) after = await step.store.update(plural, id, changed);
        return { result: after, changes: [{ changeType: 'update', event: 'incremented', before, after: after! }] };
      }),
    remove: (plural, id) =>
      write(plural, 'delete', async (step) => {
        const before = await step.store.get(plural, id);
        if (!before) return { result: false, changes: [] };
        await step.beforeDelete(id, before);
        await step.referentialActions(id);
        const removed = await step.store.remove(plural, id);
        return { result: removed, changes: removed ? [{ changeType: 'delete', before }] : [] };
      }),
  };
}

/** The scope of writes made on behalf of a write in `scope` (one level deeper, same transaction). */
export function nested(scope: RepositoryScope, plural: string): () => RepositoryScope {
  return () => ({ ...scope, depth: scope.depth + 1, path: [...scope.path, plural] });
}
