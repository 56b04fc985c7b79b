import type { EntityModel } from '../model/types.js';
import type { EntityValidators } from './defineRegistry.js';
import type { RuntimeContext } from './runtimeContext.js';

export interface EntityEntry {
  model: EntityModel;
  validators: EntityValidators;
}

export function entityOf(ctx: RuntimeContext, plural: string): EntityEntry {
  const entry = ctx.registry.entities.get(plural);
  if (!entry) throw new Error(`unknown entity ${plural}`);
  return entry;
}
