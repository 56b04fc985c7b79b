import type { EntityDefinition, EntityValidators, RouteSpec } from './model/entityRoutes.js';
import type { AppModel, EntityModel } from './model/types.js';

export type { EntityValidators };

export interface RegisteredEntity {
  model: EntityModel;
  validators: EntityValidators;
  routes: readonly RouteSpec[];
}

/** Everything the runtime needs about the generated application. */
export interface Registry {
  model: AppModel;
  entities: Map<string, RegisteredEntity>;
  /** generated/openapi.json, served at /api/docs/openapi.json. */
  openapi?: unknown;
}

/** Called by each generated router: the route table of one entity, checked by the type system. */
export function defineEntityRoutes(definition: EntityDefinition): EntityDefinition {
  return definition;
}

/** Called by generated/index.ts; checks that metadata, validators and routes belong together. */
export function defineRegistry(
  metadata: unknown,
  definitions: Record<string, EntityDefinition>,
  documents: { openapi?: unknown } = {},
): Registry {
  const model = metadata as AppModel;
  if (model?.version !== 1 || !Array.isArray(model.entities)) {
    throw new Error('generated/metadata.json is not an entigen version 1 model; run `entigen build`');
  }
  const entities = new Map<string, RegisteredEntity>();
  for (const entity of model.entities) {
    const definition = definitions[entity.plural];
    if (!definition) throw new Error(`generated/index.ts does not register ${entity.plural}; run \`entigen build\``);
    entities.set(entity.plural, { model: entity, validators: definition.validators, routes: definition.routes ?? [] });
  }
  return { model, entities, openapi: documents.openapi };
}
