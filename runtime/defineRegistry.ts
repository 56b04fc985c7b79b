import type { AppModel, EntityModel } from './model/types.js';
import type { CompiledValidator } from './validation/validationDetails.js';

/** The compiled validators of one entity, as generated/validators/<plural>.js exports them. */
export interface EntityValidators {
  create: CompiledValidator;
  update: CompiledValidator;
  bulkItem: CompiledValidator;
  increment: CompiledValidator;
}

/** Everything the runtime needs about the generated application. */
export interface Registry {
  model: AppModel;
  entities: Map<string, { model: EntityModel; validators: EntityValidators }>;
}

/** Called by generated/index.ts; checks that metadata and validators belong together. */
export function defineRegistry(metadata: unknown, validators: Record<string, EntityValidators>): Registry {
  const model = metadata as AppModel;
  if (model?.version !== 1 || !Array.isArray(model.entities)) {
    throw new Error('generated/metadata.json is not an entigen version 1 model; run `entigen build`');
  }
  const entities = new Map<string, { model: EntityModel; validators: EntityValidators }>();
  for (const entity of model.entities) {
    const entityValidators = validators[entity.plural];
    if (!entityValidators) throw new Error(`generated/index.ts has no validators for ${entity.plural}; run \`entigen build\``);
    entities.set(entity.plural, { model: entity, validators: entityValidators });
  }
  return { model, entities };
}
