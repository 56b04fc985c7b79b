import type { Router } from 'express';
import { metadata } from '../api/index.js';
import { entityWithFields, findPublicEntity, schemaList, schemaMetadata } from '../entities/metadata.js';
import { notFound } from '../errors/apiError.js';
import type { AppModel } from '../model/types.js';
import { DeclaredRouter } from './declaredRouter.js';

export const SCHEMA_PATH = '/api/v1/schema';

/** /schema/metadata, /schema/metadata/list, /schema/metadata/{entity} (plural or name). */
export function schemaRoutes(model: AppModel): Router {
  return new DeclaredRouter(SCHEMA_PATH)
    .json(metadata.schemaMetadata, ({ caller }) => ({ data: schemaMetadata(model, caller) }))
    .json(metadata.schemaList, () => ({ data: schemaList(model) }))
    .json(metadata.schemaEntity, ({ params, caller }) => {
      const entity = findPublicEntity(model, params.entity);
      if (!entity) throw notFound(`Entity ${params.entity}`);
      return { data: entityWithFields(entity, caller) };
    }).router;
}
