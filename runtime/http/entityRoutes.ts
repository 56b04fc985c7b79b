import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { RuntimeContext } from '../context.js';
import type { EntityValidators } from '../defineRegistry.js';
import { openSealedValue } from '../crypto/signedToken.js';
import { archiveOperation, restoreOperation } from '../entities/archive.js';
import { bulkCreateOperation } from '../entities/bulkCreate.js';
import { createOperation } from '../entities/create.js';
import { entityOf } from '../entities/entityOf.js';
import { getOperation } from '../entities/get.js';
import { incrementOperation } from '../entities/increment.js';
import { listOperation } from '../entities/list.js';
import { entityMetadata, fieldMetadata, fieldsMetadata, typeMetadata } from '../entities/metadata.js';
import { removeOperation } from '../entities/remove.js';
import { updateOperation } from '../entities/update.js';
import type { CursorPosition } from '../query/listQuery.js';
import { parseListQuery } from '../query/parseListQuery.js';
import { parsePopulate } from '../query/parsePopulate.js';
import { ApiError, notFound, validationError } from './errors.js';
import './requestTypes.js';

export type EntityRouteName =
  | 'list' | 'create' | 'bulkCreate' | 'get' | 'update' | 'remove' | 'increment' | 'archive' | 'restore'
  | 'metadata' | 'metadataType' | 'metadataFields' | 'metadataField';

export type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** One route of an entity: method, path under /api/v1, and the handler that serves it. */
export type RouteSpec = readonly [method: RouteMethod, path: string, handler: EntityRouteName];

/** What a generated router declares: the entity, its compiled validators and its routes. */
export interface EntityDefinition {
  plural: string;
  validators: EntityValidators;
  /** Absent for internal entities, which have no generic routes. */
  routes?: readonly RouteSpec[];
}

export function defineEntityRoutes(definition: EntityDefinition): EntityDefinition {
  return definition;
}

type Handler = (ctx: RuntimeContext, plural: string) => RequestHandler;

const send = (res: Response, status: number, data: unknown) => void res.status(status).json({ data });

const HANDLERS: Record<EntityRouteName, Handler> = {
  list: (ctx, plural) => async (req, res) => {
    const query = parseListQuery(entityOf(ctx, plural).model, req.query as Record<string, unknown>, {
      openCursor: (cursor) => openCursor(ctx, cursor),
      entity: (name) => ctx.registry.entities.get(name)?.model,
    });
    send(res, 200, await listOperation({ ctx, plural, query, caller: req.caller }));
  },
  get: (ctx, plural) => async (req, res) => {
    const { model } = entityOf(ctx, plural);
    const unknown = req.url.includes('?') ? Object.keys(req.query as object).filter((key) => key !== 'populate') : [];
    if (unknown.length > 0) throw validationError(Object.fromEntries(unknown.map((k) => [k, 'is not a known query parameter'])), 'Invalid query parameters');
    const errors: Record<string, string> = {};
    const populate =
      req.query.populate === undefined
        ? undefined
        : parsePopulate(model, req.query.populate, (key, message) => void (errors[key] ??= message), (name) => ctx.registry.entities.get(name)?.model);
    if (Object.keys(errors).length > 0) throw validationError(errors, 'Invalid query parameters');
    send(res, 200, await getOperation({ ctx, plural, id: idParam(req), caller: req.caller, populate }));
  },
  create: (ctx, plural) => async (req, res) => send(res, 201, await createOperation({ ctx, plural, body: req.body, caller: req.caller })),
  bulkCreate: (ctx, plural) => async (req, res) => send(res, 201, await bulkCreateOperation({ ctx, plural, body: req.body, caller: req.caller })),
  update: (ctx, plural) => async (req, res) =>
    send(res, 200, await updateOperation({ ctx, plural, id: idParam(req), body: req.body, caller: req.caller })),
  remove: (ctx, plural) => async (req, res) => send(res, 200, await removeOperation({ ctx, plural, id: idParam(req), caller: req.caller })),
  increment: (ctx, plural) => async (req, res) =>
    send(res, 200, await incrementOperation({ ctx, plural, id: idParam(req), body: req.body, caller: req.caller })),
  archive: (ctx, plural) => async (req, res) => send(res, 200, await archiveOperation({ ctx, plural, id: idParam(req), caller: req.caller })),
  restore: (ctx, plural) => async (req, res) => send(res, 200, await restoreOperation({ ctx, plural, id: idParam(req), caller: req.caller })),
  metadata: (ctx, plural) => (_req, res) => send(res, 200, entityMetadata(entityOf(ctx, plural).model)),
  metadataType: (ctx, plural) => (_req, res) => send(res, 200, typeMetadata(entityOf(ctx, plural).model)),
  metadataFields: (ctx, plural) => (_req, res) => send(res, 200, fieldsMetadata(entityOf(ctx, plural).model)),
  metadataField: (ctx, plural) => (req, res) => {
    const field = entityOf(ctx, plural).model.fields.find((f) => f.name === req.params.name && !f.hidden);
    if (!field) throw notFound(`Field ${req.params.name}`);
    send(res, 200, fieldMetadata(field));
  },
};

/** The Express router of one entity, to mount at `/{plural}`, from the route table its generated router declares. */
export function buildEntityRouter(ctx: RuntimeContext, definition: EntityDefinition): Router {
  const router = Router();
  const prefix = `/${definition.plural}`;
  for (const [method, path, name] of definition.routes ?? []) {
    const verb = method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    router[verb](path.slice(prefix.length) || '/', HANDLERS[name](ctx, definition.plural));
  }
  return router;
}

function idParam(req: Request): string {
  return String(req.params.id);
}

function openCursor(ctx: RuntimeContext, cursor: string): CursorPosition | undefined {
  const value = openSealedValue(ctx.secrets.signing, cursor) as { a?: unknown; d?: unknown } | undefined;
  if (!value || typeof value.a !== 'string' || (value.d !== 'asc' && value.d !== 'desc')) return undefined;
  return { after: value.a, direction: value.d };
}

export { ApiError };
