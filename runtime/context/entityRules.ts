import type { EntityRules, RuntimeContext } from './runtimeContext.js';

export type { EntityRules, EntityRulesTable } from './runtimeContext.js';

/** The rules of one entity, if it has any. */
export function rulesFor(ctx: RuntimeContext, plural: string): EntityRules | undefined {
  return ctx.rules.get(plural);
}
