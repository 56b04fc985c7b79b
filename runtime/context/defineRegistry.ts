import type { EntityDefinition, EntityValidators, RouteSpec } from '../model/entityRoutes.js';
import type { AppModel, EntityModel } from '../model/types.js';
import { HOOK_NAMES, type HookModule, type HookTable } from './hookTypes.js';

export type { EntityValidators };

export interface RegisteredEntity {
  model: EntityModel;
  validators: EntityValidators;
  routes: readonly RouteSpec[];
}

/**
 * The OpenAPI document, or a function that loads it: generated/index.ts imports it when it is
 * first asked for, so a server that never serves it never holds it (some 5 MB for a large model).
 */
export type OpenApiSource = object | (() => Promise<unknown>);

/** Everything the runtime needs about the generated application. */
export interface Registry {
  model: AppModel;
  entities: Map<string, RegisteredEntity>;
  /** generated/openapi.json, served at /api/docs/openapi.json. */
  openapi?: OpenApiSource;
  /** The application's hooks by entity (hooks/<plural>.ts). */
  hooks: HookTable;
}

/** Called by each generated router: the route table of one entity, checked by the type system. */
export function defineEntityRoutes(definition: EntityDefinition): EntityDefinition {
  return definition;
}

/** Called by generated/index.ts; checks that metadata, validators and routes belong together. */
export function defineRegistry(
  metadata: unknown,
  definitions: Record<string, EntityDefinition>,
  documents: { openapi?: OpenApiSource; hooks?: readonly unknown[] } = {},
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
  return { model, entities, openapi: documents.openapi, hooks: hookTable(entities, documents.hooks ?? []) };
}

/**
 * The hook modules' default exports by entity. The build checked them; this checks again, since a
 * module may have changed since: each must come from defineHooks, for a known public entity,
 * once, with known hook names only.
 */
export function hookTable(entities: Map<string, RegisteredEntity>, modules: readonly unknown[]): HookTable {
  const table = new Map<string, HookModule['hooks']>();
  for (const loaded of modules) {
    // A hook module of a project without "type": "module" loads as CommonJS: its default one level down.
    const module =
      (loaded as { plural?: unknown })?.plural === undefined ? (loaded as { default?: unknown })?.default : loaded;
    const { plural, hooks } = (module ?? {}) as Partial<HookModule>;
    if (typeof plural !== 'string' || !hooks || typeof hooks !== 'object') {
      throw new Error('a hook module must export default defineHooks(plural, { ... })');
    }
    const entity = entities.get(plural);
    if (!entity || entity.model.internal) throw new Error(`hooks for unknown entity "${plural}"`);
    if (table.has(plural)) throw new Error(`two hook modules for ${plural}`);
    for (const [name, hook] of Object.entries(hooks)) {
      if (name === 'endpoints') {
        checkEndpointHandlers(entity.model, hook);
        continue;
      }
      if (!(HOOK_NAMES as readonly string[]).includes(name)) {
        throw new Error(`hooks for ${plural}: unknown hook "${name}" (hooks: ${HOOK_NAMES.join(', ')})`);
      }
      if (typeof hook !== 'function') throw new Error(`hooks for ${plural}: ${name} must be a function`);
    }
    table.set(plural, hooks);
  }
  for (const { model } of entities.values()) {
    const declared = model.endpoints ?? [];
    const handlers = (table.get(model.plural) as { endpoints?: Record<string, unknown> } | undefined)?.endpoints ?? {};
    const missing = declared.filter((endpoint) => typeof handlers[endpoint.name] !== 'function').map((e) => e.name);
    if (missing.length > 0) {
      throw new Error(
        `${model.plural} declares endpoints without a handler: ${missing.join(', ')} (export them from hooks/${model.plural}.ts: defineHooks('${model.plural}', { endpoints: { ${missing[0]}: async ({ ... }) => ... } }))`,
      );
    }
  }
  return table as HookTable;
}

function checkEndpointHandlers(model: EntityModel, handlers: unknown): void {
  if (!handlers || typeof handlers !== 'object')
    throw new Error(`hooks for ${model.plural}: endpoints must be an object of handlers`);
  const declared = new Set((model.endpoints ?? []).map((e) => e.name));
  for (const [name, handler] of Object.entries(handlers)) {
    if (!declared.has(name)) {
      throw new Error(
        `hooks for ${model.plural}: endpoint "${name}" is not declared in the entity file (endpoints: ${[...declared].join(', ') || 'none'})`,
      );
    }
    if (typeof handler !== 'function')
      throw new Error(`hooks for ${model.plural}: endpoint ${name} must be a function`);
  }
}
