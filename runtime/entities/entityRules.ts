import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import type { Doc } from '../store/types.js';

/**
 * What an entity adds to its writes: checks and values after validation and before the store,
 * and side effects after a delete. Features register theirs from their own folders; the
 * operations only ask the context for the entity's rules and never name a collection.
 */
export interface EntityRules {
  beforeCreate?(ctx: RuntimeContext, caller: Caller, values: Record<string, unknown>): Promise<void>;
  beforeUpdate?(ctx: RuntimeContext, caller: Caller, current: Doc, values: Record<string, unknown>): Promise<void>;
  /** After a delete committed, with the record as it was. */
  afterRemove?(doc: Doc): void;
}

/** Rules by entity plural, as the server composed them. */
export type EntityRulesTable = ReadonlyMap<string, EntityRules>;

/** The rules of one entity, if it has any. */
export function rulesFor(ctx: RuntimeContext, plural: string): EntityRules | undefined {
  return ctx.rules.get(plural);
}
