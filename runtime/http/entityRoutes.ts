import type { Request, RequestHandler, Response, Router } from 'express';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { openSealedValue } from '../crypto/signedToken.js';
import { aggregateOperation } from '../entities/aggregate.js';
import { archiveOperation, restoreOperation } from '../entities/archive.js';
import { bulkCreateOperation } from '../entities/bulkCreate.js';
import { createOperation } from '../entities/create.js';
import { endpointOperation } from '../entities/endpoint.js';
import { getOperation } from '../entities/get.js';
import { incrementOperation } from '../entities/increment.js';
import { listOperation } from '../entities/list.js';
import {
  localizeListQuery,
  localizeRecord,
  type RequestLocale,
  requestLocale,
  showsLocalized,
} from '../entities/localize.js';
import { entityMetadata, fieldMetadata, fieldsMetadata, typeMetadata } from '../entities/metadata.js';
import { relationListOperation } from '../entities/relations.js';
import { removeOperation } from '../entities/remove.js';
import { restoreFromTrashOperation } from '../entities/trash.js';
import { updateOperation } from '../entities/update.js';
import { notFound, validationError } from '../errors/apiError.js';
import {
  compareVersions,
  decideFieldChange,
  getVersion,
  type HistoryPage,
  listAudit,
  listFieldChanges,
  listVersions,
  revertToVersion,
} from '../history/historyOperations.js';
import { acceptedLocale } from '../model/locales.js';
import type { EntityModel } from '../model/types.js';
import type { CursorPosition, ListQuery } from '../query/listQuery.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../query/listQuery.js';
import { parseAggregateQuery } from '../query/parseAggregateQuery.js';
import { parseListQuery } from '../query/parseListQuery.js';
import { parsePopulate } from '../query/parsePopulate.js';
import type { Doc } from '../store/types.js';
import { exactRouter } from './exactRouter.js';
import { readBody } from './readBody.js';
import './requestTypes.js';
import type { EntityDefinition, EntityRouteName } from '../model/entityRoutes.js';

type Handler = (ctx: RuntimeContext, plural: string) => RequestHandler;

/**
 * `{ data }` with the bytes and headers res.json writes, without Express's generic send path (type
 * and charset parsing, freshness): the hot path of every entity route. A res.json wrapped for
 * this request (idempotency keeps the answer before it goes out) is used as it is.
 */
function send(res: Response, status: number, data: unknown): void {
  if (Object.hasOwn(res, 'json')) return void res.status(status).json({ data });
  const body = JSON.stringify({ data });
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** One record of the entity, shown in the request's locale. */
function sendRecord(ctx: RuntimeContext, plural: string, req: Request, res: Response, record: Doc): void {
  const { model } = entityOf(ctx, plural);
  const locale = localeOf(ctx, req, res, model);
  send(res, 200, locale ? localizeRecord(ctx, model, record, locale.read) : record);
}

/**
 * The request's locale where the application has locales (`?locale=`, Accept-Language, the
 * default); the answer then names it (Content-Language) and varies by Accept-Language.
 */
function localeOf(ctx: RuntimeContext, req: Request, res: Response, model: EntityModel): RequestLocale | undefined {
  const locales = ctx.registry.model.locales;
  if (!locales) return undefined;
  // An answer without localized values is the same in every locale: only `?locale` is checked.
  if (!showsLocalized(ctx, model))
    return requestLocale(
      locales,
      req.url.includes('?') ? (req.query as Record<string, unknown>).locale : undefined,
      undefined,
    );
  const locale = requestLocale(
    locales,
    (req.query as Record<string, unknown>).locale,
    acceptedLocale(req.headers['accept-language'], locales.available),
  );
  const vary = res.getHeader('Vary');
  if (!String(vary ?? '').includes('Accept-Language'))
    res.setHeader('Vary', vary ? `${vary}, Accept-Language` : 'Accept-Language');
  if (locale.read !== 'all') res.setHeader('Content-Language', locale.read.locale);
  return locale;
}

/** The query string without `locale`, which localeOf has read. */
function queryOf(req: Request, locale: RequestLocale | undefined): Record<string, unknown> {
  const query = req.query as Record<string, unknown>;
  if (!locale || !('locale' in query)) return query;
  const { locale: _, ...rest } = query;
  return rest;
}

function localizedList(
  ctx: RuntimeContext,
  model: EntityModel,
  query: ListQuery,
  locale: RequestLocale | undefined,
): ListQuery {
  const locales = ctx.registry.model.locales;
  return locale && locales ? localizeListQuery(model, locales, query, locale.read) : query;
}

function localizedItems(ctx: RuntimeContext, model: EntityModel, items: Doc[], locale: RequestLocale): Doc[] {
  return items.map((item) => localizeRecord(ctx, model, item, locale.read));
}

const HANDLERS: Record<EntityRouteName, Handler> = {
  list: (ctx, plural) => async (req, res) => {
    const { model } = entityOf(ctx, plural);
    const locale = localeOf(ctx, req, res, model);
    const query = parseListQuery(model, queryOf(req, locale), {
      openCursor: (cursor) => openCursor(ctx, cursor),
      entity: (name) => ctx.registry.entities.get(name)?.model,
    });
    const result = await listOperation({
      ctx,
      plural,
      query: localizedList(ctx, model, query, locale),
      caller: req.caller,
    });
    send(res, 200, locale ? { ...result, items: localizedItems(ctx, model, result.items, locale) } : result);
  },
  aggregate: (ctx, plural) => async (req, res) => {
    const { model } = entityOf(ctx, plural);
    const locale = localeOf(ctx, req, res, model);
    const query = parseAggregateQuery(model, queryOf(req, locale));
    send(res, 200, await aggregateOperation({ ctx, plural, query, caller: req.caller, locale: locale?.read }));
  },
  get: (ctx, plural) => async (req, res) => {
    const { model } = entityOf(ctx, plural);
    const locale = localeOf(ctx, req, res, model);
    const unknown = req.url.includes('?')
      ? Object.keys(req.query as object).filter((key) => key !== 'populate' && !(locale && key === 'locale'))
      : [];
    if (unknown.length > 0)
      throw validationError(
        Object.fromEntries(unknown.map((k) => [k, 'is not a known query parameter'])),
        'Invalid query parameters',
      );
    const errors: Record<string, string> = {};
    const populate =
      req.query.populate === undefined
        ? undefined
        : parsePopulate(
            model,
            req.query.populate,
            (key, message) => {
              errors[key] ??= message;
            },
            (name) => ctx.registry.entities.get(name)?.model,
          );
    if (Object.keys(errors).length > 0) throw validationError(errors, 'Invalid query parameters');
    const record = await getOperation({ ctx, plural, id: idParam(req), caller: req.caller, populate });
    send(res, 200, locale ? localizeRecord(ctx, model, record, locale.read) : record);
  },
  create: (ctx, plural) => async (req, res) => {
    const { model } = entityOf(ctx, plural);
    const locale = localeOf(ctx, req, res, model);
    const record = await createOperation({
      ctx,
      plural,
      body: req.body,
      caller: req.caller,
      changeReason: changeReason(req),
      locale: locale?.write,
    });
    send(res, 201, locale ? localizeRecord(ctx, model, record, locale.read) : record);
  },
  bulkCreate: (ctx, plural) => async (req, res) => {
    const { model } = entityOf(ctx, plural);
    const locale = localeOf(ctx, req, res, model);
    const result = await bulkCreateOperation({
      ctx,
      plural,
      body: req.body,
      caller: req.caller,
      changeReason: changeReason(req),
      locale: locale?.write,
    });
    send(res, 201, locale ? { ...result, items: localizedItems(ctx, model, result.items, locale) } : result);
  },
  update: (ctx, plural) => async (req, res) => {
    const { model } = entityOf(ctx, plural);
    const locale = localeOf(ctx, req, res, model);
    const record = await updateOperation({
      ctx,
      plural,
      id: idParam(req),
      body: req.body,
      caller: req.caller,
      changeReason: changeReason(req),
      locale: locale?.write,
    });
    send(res, 200, locale ? localizeRecord(ctx, model, record, locale.read) : record);
  },
  remove: (ctx, plural) => async (req, res) =>
    send(
      res,
      200,
      await removeOperation({
        ctx,
        plural,
        id: idParam(req),
        caller: req.caller,
        changeReason: changeReason(req),
        permanent: permanentParam(req),
      }),
    ),
  increment: (ctx, plural) => async (req, res) =>
    sendRecord(
      ctx,
      plural,
      req,
      res,
      await incrementOperation({
        ctx,
        plural,
        id: idParam(req),
        body: req.body,
        caller: req.caller,
        changeReason: changeReason(req),
      }),
    ),
  archive: (ctx, plural) => async (req, res) =>
    sendRecord(
      ctx,
      plural,
      req,
      res,
      await archiveOperation({ ctx, plural, id: idParam(req), caller: req.caller, changeReason: changeReason(req) }),
    ),
  restore: (ctx, plural) => async (req, res) =>
    sendRecord(
      ctx,
      plural,
      req,
      res,
      await restoreOperation({ ctx, plural, id: idParam(req), caller: req.caller, changeReason: changeReason(req) }),
    ),
  restoreFromTrash: (ctx, plural) => async (req, res) =>
    sendRecord(
      ctx,
      plural,
      req,
      res,
      await restoreFromTrashOperation({
        ctx,
        plural,
        id: idParam(req),
        caller: req.caller,
        changeReason: changeReason(req),
      }),
    ),
  // History endpoints answer bare bodies, as the spec shows them.
  versions: (ctx, plural) => async (req, res) =>
    void res.json(await listVersions(ctx, plural, idParam(req), req.caller, historyPage(ctx, req, 'number'))),
  version: (ctx, plural) => async (req, res) =>
    void res.json(await getVersion(ctx, plural, idParam(req), versionParam(req), req.caller)),
  compareVersions: (ctx, plural) => async (req, res) => {
    const query = strictQuery(req, ['a', 'b']);
    const details: Record<string, string> = {};
    const number = (key: 'a' | 'b') => {
      const text = query[key];
      if (typeof text !== 'string' || !/^[1-9]\d{0,9}$/.test(text)) details[key] = 'must be a version number';
      return Number(text);
    };
    const [a, b] = [number('a'), number('b')];
    if (Object.keys(details).length > 0) throw validationError(details, 'Invalid query parameters');
    res.json(await compareVersions(ctx, plural, idParam(req), a, b, req.caller));
  },
  revert: (ctx, plural) => async (req, res) => {
    const body = readBody(req.body ?? {}, { changeReason: { type: 'string', max: 1000 } });
    res.json(
      await revertToVersion(
        ctx,
        plural,
        idParam(req),
        versionParam(req),
        req.caller,
        (body.changeReason as string | undefined) ?? changeReason(req),
      ),
    );
  },
  audit: (ctx, plural) => async (req, res) =>
    void res.json(await listAudit(ctx, plural, idParam(req), req.caller, historyPage(ctx, req, 'string'))),
  fieldChanges: (ctx, plural) => async (req, res) => {
    const query = strictQuery(req, ['fieldName', 'approvalStatus']);
    const details: Record<string, string> = {};
    if (query.fieldName !== undefined && typeof query.fieldName !== 'string')
      details.fieldName = 'must be a field name';
    if (
      query.approvalStatus !== undefined &&
      !['pending', 'approved', 'rejected'].includes(String(query.approvalStatus))
    ) {
      details.approvalStatus = 'must be one of pending, approved, rejected';
    }
    if (Object.keys(details).length > 0) throw validationError(details, 'Invalid query parameters');
    res.json(
      await listFieldChanges(
        ctx,
        plural,
        idParam(req),
        req.caller,
        query as { fieldName?: string; approvalStatus?: string },
      ),
    );
  },
  decideFieldChange: (ctx, plural) => async (req, res) => {
    const body = readBody(req.body, {
      approvalStatus: { type: 'enum', values: ['approved', 'rejected'], required: true },
      approvedBy: { type: 'string', max: 200 },
    });
    const decision = {
      approvalStatus: body.approvalStatus as 'approved' | 'rejected',
      approvedBy: body.approvedBy as string | undefined,
    };
    res.json(await decideFieldChange(ctx, plural, idParam(req), String(req.params.changeId), req.caller, decision));
  },
  metadata: (ctx, plural) => (_req, res) => send(res, 200, entityMetadata(entityOf(ctx, plural).model)),
  metadataType: (ctx, plural) => (_req, res) => send(res, 200, typeMetadata(entityOf(ctx, plural).model)),
  metadataFields: (ctx, plural) => (_req, res) => send(res, 200, fieldsMetadata(entityOf(ctx, plural).model)),
  metadataField: (ctx, plural) => (req, res) => {
    const field = entityOf(ctx, plural).model.fields.find((f) => f.name === req.params.name && !f.hidden);
    if (!field) throw notFound(`Field ${req.params.name}`);
    send(res, 200, fieldMetadata(field));
  },
};

/** A custom endpoint: no query parameters; the body (POST, PUT, PATCH) goes to its validator. */
const endpointHandler =
  (ctx: RuntimeContext, plural: string, name: string): RequestHandler =>
  async (req, res) => {
    const unknown = Object.keys(req.query as object).filter((k) => !(k === 'locale' && ctx.registry.model.locales));
    if (unknown.length > 0) {
      throw validationError(
        Object.fromEntries(unknown.map((k) => [k, 'is not a known query parameter'])),
        'Invalid query parameters',
      );
    }
    const id = req.params.id === undefined ? undefined : idParam(req);
    const declared = entityOf(ctx, plural).model.endpoints?.find((e) => e.name === name);
    const answer = await endpointOperation({ ctx, plural, name, id, body: req.body, caller: req.caller });
    if (declared?.response === 'record') sendRecord(ctx, plural, req, res, answer as Doc);
    else send(res, 200, answer);
  };

/** GET /{plural}/{id}/{relation}: the related entity's list query language, narrowed to the records referencing this one. */
const relationHandler =
  (ctx: RuntimeContext, plural: string, relation: string): RequestHandler =>
  async (req, res) => {
    const declared = entityOf(ctx, plural).model.relations!.find((r) => r.name === relation)!;
    const target = entityOf(ctx, declared.entity).model;
    const locale = localeOf(ctx, req, res, target);
    const query = parseListQuery(target, queryOf(req, locale), {
      openCursor: (cursor) => openCursor(ctx, cursor),
      entity: (name) => ctx.registry.entities.get(name)?.model,
    });
    const result = await relationListOperation({
      ctx,
      plural,
      id: idParam(req),
      relation,
      query: localizedList(ctx, target, query, locale),
      caller: req.caller,
    });
    send(res, 200, locale ? { ...result, items: localizedItems(ctx, target, result.items, locale) } : result);
  };

/** One route of an entity: method, the path under `/{plural}` (`/`, `/:id`, ...), its handler. */
export type EntityRoute = [method: string, path: string, handler: RequestHandler];

/** The handlers of an entity's route table (the one its generated router declares), in its order. */
export function entityRouteHandlers(ctx: RuntimeContext, definition: EntityDefinition): EntityRoute[] {
  const prefix = `/${definition.plural}`;
  return (definition.routes ?? []).map(([method, path, name]) => [
    method,
    path.slice(prefix.length) || '/',
    name.startsWith('endpoint:')
      ? endpointHandler(ctx, definition.plural, name.slice('endpoint:'.length))
      : name.startsWith('relation:')
        ? relationHandler(ctx, definition.plural, name.slice('relation:'.length))
        : HANDLERS[name as EntityRouteName](ctx, definition.plural),
  ]);
}

/** The Express router of one entity, to mount at `/{plural}`. */
export function buildEntityRouter(ctx: RuntimeContext, definition: EntityDefinition): Router {
  const router = exactRouter();
  for (const [method, path, handler] of entityRouteHandlers(ctx, definition))
    router[method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete'](path, handler);
  return router;
}

function idParam(req: Request): string {
  return String(req.params.id);
}

function versionParam(req: Request): number {
  const text = String(req.params.version);
  if (!/^[1-9]\d{0,9}$/.test(text)) throw notFound(`Version ${text}`);
  return Number(text);
}

const MAX_CHANGE_REASON = 1000;

/** The reason of a write: the `x-change-reason` header, else the `changeReason` query parameter. */
export function changeReason(req: Request): string | undefined {
  const header = req.headers['x-change-reason'];
  const value =
    typeof header === 'string'
      ? header
      : typeof req.query.changeReason === 'string'
        ? req.query.changeReason
        : undefined;
  if (value !== undefined && value.length > MAX_CHANGE_REASON)
    throw validationError({ changeReason: `must be at most ${MAX_CHANGE_REASON} characters` });
  return value || undefined;
}

/** DELETE's `permanent`: `true` or `false` (default). */
function permanentParam(req: Request): boolean {
  const value = req.query.permanent;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw validationError({ permanent: 'must be true or false' }, 'Invalid query parameters');
}

function strictQuery(req: Request, allowed: string[]): Record<string, unknown> {
  const query = req.query as Record<string, unknown>;
  const unknown = Object.keys(query).filter((key) => !allowed.includes(key));
  if (unknown.length > 0)
    throw validationError(
      Object.fromEntries(unknown.map((k) => [k, 'is not a known query parameter'])),
      'Invalid query parameters',
    );
  return query;
}

/** `limit` (1-200, default 25) and `cursor` of the history lists; `extra` names more query parameters allowed. */
export function historyPage(
  ctx: RuntimeContext,
  req: Request,
  cursorKind: 'number' | 'string',
  extra: string[] = [],
): HistoryPage {
  return pageOf(ctx, strictQuery(req, ['limit', 'cursor', ...extra]), cursorKind);
}

/** A page of history from `limit` and a sealed `cursor` (query values, as text or numbers). */
export function pageOf(
  ctx: RuntimeContext,
  query: { limit?: unknown; cursor?: unknown },
  cursorKind: 'number' | 'string',
): HistoryPage {
  const limit = query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit);
  if (typeof query.limit === 'object' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw validationError({ limit: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }, 'Invalid query parameters');
  }
  if (query.cursor === undefined) return { limit };
  const opened =
    typeof query.cursor === 'string'
      ? (openSealedValue(ctx.secrets.signing, query.cursor) as { h?: unknown } | undefined)
      : undefined;
  if (typeof opened?.h !== cursorKind)
    throw validationError({ cursor: 'is not a valid cursor' }, 'Invalid query parameters');
  return { limit, before: opened!.h as number | string };
}

function openCursor(ctx: RuntimeContext, cursor: string): CursorPosition | undefined {
  const value = openSealedValue(ctx.secrets.signing, cursor) as { a?: unknown; d?: unknown } | undefined;
  if (!value || typeof value.a !== 'string' || (value.d !== 'asc' && value.d !== 'desc')) return undefined;
  return { after: value.a, direction: value.d };
}
