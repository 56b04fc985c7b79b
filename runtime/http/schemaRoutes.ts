import type { Router } from 'express';
import { entityWithFields, findPublicEntity, schemaList, schemaMetadata } from '../entities/metadata.js';
import { notFound } from '../errors/apiError.js';
import type { AppModel } from '../model/types.js';
import { exactRouter } from './exactRouter.js';

/** /schema/metadata, /schema/metadata/list, /schema/metadata/{entity} (plural or name); mounted at /api/v1/schema. */
export function schemaRoutes(model: AppModel): Router {
  const router = exactRouter();
  router.get('/metadata', (_req, res) => void res.json({ data: schemaMetadata(model) }));
  router.get('/metadata/list', (_req, res) => void res.json({ data: schemaList(model) }));
  router.get('/metadata/:entity', (req, res) => {
    const entity = findPublicEntity(model, String(req.params.entity));
    if (!entity) throw notFound(`Entity ${req.params.entity}`);
    res.json({ data: entityWithFields(entity) });
  });
  return router;
}
