import type { Request, RequestHandler, Response, Router } from 'express';
import { fieldAbilities, fieldView } from '../access/fieldAccess.js';
import type { Caller } from '../context/caller.js';
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
import { listOperation, openListCursor } from '../entities/list.js';
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
import type { ListQuery } from '../query/listQuery.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../query/listQuery.js';
import { parseAggregateQuery } from '../query/parseAggregateQuery.js';
import { parseListQuery } from '../query/parseListQuery.js';
import { parsePopulate } from '../query/parsePopulate.js';
import type { Doc } from '../store/types.js';
import { readBody, readQuery } from './declaredRouter.js';
import { exactRouter } from './exactRouter.js';
import { requestContext } from './requestTrace.js';
import './requestTypes.js';
import { API_PREFIX, type EntityRouteDeclaration } from '../api/entityRoutes.js';
import { expressPath } from '../api/route.js';
import type { PopulateSpec } from '../entities/populate.js';
import type { EntityRouteName } from '../model/entityRoutes.js';
import type { AggregateRequest } from '../query/parseAggregateQuery.js';

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

/** What an entity route's handler is given: the request, read as its declaration says. */
interface EntityInput {
  ctx: RuntimeContext;
  route: EntityRouteDeclaration;
  req: Request;
  res: Response;
  /** The entity the answer's records belong to (a reverse relation's: the related entity). */
  model: EntityModel;
  locale: RequestLocale | undefined;
  /** The query, checked against the declaration, or read by the grammar's parser. */
  query: Record<string, unknown>;
  /** The body: checked against the declaration, or left to the entity's compiled validators. */
  body: unknown;
}

type Serve = (input: EntityInput) => Promise<void> | void;

/**
 * A record write's arguments: the common ones, then the route's own. Spread last, not first: on
 * Node 20 an object spread and then given a property of its own gets a new hidden class each
 * time, and every read of it misses V8's caches.
 */
const writeOf = <T extends object>({ ctx, route, req }: EntityInput, own: T) => ({
  ctx,
  plural: route.entity,
  caller: req.caller,
  changeReason: changeReason(req),
  ...own,
});

/** One record, in the request's locale. */
function answerRecord({ ctx, res, model, locale }: EntityInput, record: Doc, status = 200): void {
  send(res, status, locale ? localizeRecord(ctx, model, record, locale.read) : record);
}

/** A page of records, in the request's locale. */
function answerItems<T extends { items: Doc[] }>(
  { ctx, res, model, locale }: EntityInput,
  page: T,
  status = 200,
): void {
  send(res, status, locale ? { ...page, items: localizedItems(ctx, model, page.items, locale) } : page);
}

const SERVE: Record<EntityRouteName, Serve> = {
  list: async (input) =>
    answerItems(
      input,
      await listOperation({
        ctx: input.ctx,
        plural: input.route.entity,
        query: input.query as unknown as ListQuery,
        caller: input.req.caller,
      }),
    ),
  aggregate: async ({ ctx, route, req, res, query, locale }) =>
    send(
      res,
      200,
      await aggregateOperation({
        ctx,
        plural: route.entity,
        query: query as unknown as AggregateRequest,
        caller: req.caller,
        locale: locale?.read,
      }),
    ),
  get: async (input) =>
    answerRecord(
      input,
      await getOperation({
        ctx: input.ctx,
        plural: input.route.entity,
        id: idParam(input.req),
        caller: input.req.caller,
        populate: input.query.populate as PopulateSpec | undefined,
      }),
    ),
  create: async (input) =>
    answerRecord(input, await createOperation(writeOf(input, { body: input.body, locale: input.locale?.write })), 201),
  bulkCreate: async (input) =>
    answerItems(
      input,
      await bulkCreateOperation(writeOf(input, { body: input.body, locale: input.locale?.write })),
      201,
    ),
  update: async (input) =>
    answerRecord(
      input,
      await updateOperation(writeOf(input, { id: idParam(input.req), body: input.body, locale: input.locale?.write })),
    ),
  remove: async (input) =>
    send(
      input.res,
      200,
      await removeOperation(writeOf(input, { id: idParam(input.req), permanent: input.query.permanent === true })),
    ),
  increment: async (input) =>
    answerRecord(input, await incrementOperation(writeOf(input, { id: idParam(input.req), body: input.body }))),
  archive: async (input) => answerRecord(input, await archiveOperation(writeOf(input, { id: idParam(input.req) }))),
  restore: async (input) => answerRecord(input, await restoreOperation(writeOf(input, { id: idParam(input.req) }))),
  restoreFromTrash: async (input) =>
    answerRecord(input, await restoreFromTrashOperation(writeOf(input, { id: idParam(input.req) }))),
  // History endpoints answer bare bodies, as the spec shows them.
  versions: async ({ ctx, route, req, res, query }) =>
    void res.json(await listVersions(ctx, route.entity, idParam(req), req.caller, pageOf(ctx, query, 'number'))),
  version: async ({ ctx, route, req, res }) =>
    void res.json(await getVersion(ctx, route.entity, idParam(req), versionParam(req), req.caller)),
  compareVersions: async ({ ctx, route, req, res, query }) =>
    void res.json(
      await compareVersions(ctx, route.entity, idParam(req), query.a as number, query.b as number, req.caller),
    ),
  revert: async ({ ctx, route, req, res, body }) =>
    void res.json(
      await revertToVersion(
        ctx,
        route.entity,
        idParam(req),
        versionParam(req),
        req.caller,
        (body as { changeReason?: string }).changeReason ?? changeReason(req),
      ),
    ),
  audit: async ({ ctx, route, req, res, query }) =>
    void res.json(await listAudit(ctx, route.entity, idParam(req), req.caller, pageOf(ctx, query, 'string'))),
  fieldChanges: async ({ ctx, route, req, res, query }) =>
    void res.json(await listFieldChanges(ctx, route.entity, idParam(req), req.caller, query)),
  decideFieldChange: async ({ ctx, route, req, res, body }) =>
    void res.json(
      await decideFieldChange(
        ctx,
        route.entity,
        idParam(req),
        String(req.params.changeId),
        req.caller,
        body as { approvalStatus: 'approved' | 'rejected'; approvedBy?: string },
      ),
    ),
  metadata: ({ ctx, route, res }) => send(res, 200, entityMetadata(entityOf(ctx, route.entity).model)),
  metadataType: ({ ctx, route, res }) => send(res, 200, typeMetadata(entityOf(ctx, route.entity).model)),
  metadataFields: ({ ctx, route, req, res }) =>
    send(res, 200, fieldsMetadata(entityOf(ctx, route.entity).model, req.caller)),
  metadataField: ({ ctx, route, req, res }) => {
    const model = entityOf(ctx, route.entity).model;
    const field = model.fields.find((f) => f.name === req.params.name && !f.hidden);
    if (!field) throw notFound(`Field ${req.params.name}`);
    send(res, 200, fieldMetadata(field, field.access ? fieldAbilities(model, req.caller, field) : undefined));
  },
};

/** A custom endpoint: the body goes to its validator; a `record` answer is shown like GET's. */
const serveEndpoint =
  (name: string): Serve =>
  async (input) => {
    const { ctx, route, req, res, model } = input;
    const id = req.params.id === undefined ? undefined : idParam(req);
    const answer = await endpointOperation({
      ctx,
      plural: route.entity,
      name,
      id,
      body: input.body,
      caller: req.caller,
    });
    if (model.endpoints?.find((e) => e.name === name)?.response === 'record') answerRecord(input, answer as Doc);
    else send(res, 200, answer);
  };

/** GET /{plural}/{id}/{relation}: the related entity's list, narrowed to the records referencing this one. */
const serveRelation =
  (relation: string): Serve =>
  async (input) =>
    answerItems(
      input,
      await relationListOperation({
        ctx: input.ctx,
        plural: input.route.entity,
        id: idParam(input.req),
        relation,
        query: input.query as unknown as ListQuery,
        caller: input.req.caller,
      }),
    );

/** The entity whose records a route answers: a reverse relation's related entity, else its own. */
function answerModel(ctx: RuntimeContext, route: EntityRouteDeclaration): EntityModel {
  const own = entityOf(ctx, route.entity).model;
  if (!route.name.startsWith('relation:')) return own;
  const relation = own.relations!.find((r) => `relation:${r.name}` === route.name)!;
  return entityOf(ctx, relation.entity).model;
}

/** The query of a route whose grammar has a parser of its own. */
function parsedQuery(
  ctx: RuntimeContext,
  parser: 'list' | 'aggregate' | 'populate',
  model: EntityModel,
  locale: RequestLocale | undefined,
  query: Record<string, unknown>,
  caller: Caller,
): Record<string, unknown> {
  const entity = (name: string) => ctx.registry.entities.get(name)?.model;
  // What the caller may not see on every record, they may not select or measure by either.
  const unseen = fieldView(model, caller)?.unseen;
  if (parser === 'list') {
    const list = parseListQuery(model, query, { openCursor: (cursor) => openListCursor(ctx, cursor), entity, unseen });
    return localizedList(ctx, model, list, locale) as unknown as Record<string, unknown>;
  }
  if (parser === 'aggregate') return parseAggregateQuery(model, query, unseen) as unknown as Record<string, unknown>;
  const unknown = Object.keys(query).filter((key) => key !== 'populate');
  const errors: Record<string, string> = Object.fromEntries(
    unknown.map((key) => [key, 'is not a known query parameter']),
  );
  const populate =
    query.populate === undefined
      ? undefined
      : parsePopulate(
          model,
          query.populate,
          (key, message) => {
            errors[key] ??= message;
          },
          entity,
        );
  if (Object.keys(errors).length > 0) throw validationError(errors, 'Invalid query parameters');
  return { populate };
}

/** The handler of one declared entity route: its locale, query and body read as declared, then its operation. */
function entityHandler(ctx: RuntimeContext, route: EntityRouteDeclaration): RequestHandler {
  const [kind, own] = route.name.split(':') as [string, string | undefined];
  const serve =
    kind === 'endpoint'
      ? serveEndpoint(own!)
      : kind === 'relation'
        ? serveRelation(own!)
        : SERVE[kind as EntityRouteName];
  const model = answerModel(ctx, route);
  const empty = {};
  return async (req, res) => {
    const locale = route.localized ? localeOf(ctx, req, res, model) : undefined;
    // Express parses the query string on each read of req.query: not at all when there is none.
    const raw = (route.grammar || route.query) && req.url.includes('?') ? queryOf(req, locale) : empty;
    const query = route.grammar
      ? parsedQuery(ctx, route.grammar.parser, model, locale, raw, req.caller)
      : readQuery(route, raw);
    const body = route.bodyCheckedBy === 'entity' ? req.body : readBody(route, req.body);
    await serve({ ctx: requestContext(ctx, req), route, req, res, model, locale, query, body });
  };
}

/** One route of an entity: method, the path under `/{plural}` (`/`, `/:id`, ...), its handler. */
export type EntityRoute = [method: string, path: string, handler: RequestHandler];

/** The handlers of an entity's declared routes, in match order. */
export function entityRouteHandlers(ctx: RuntimeContext, routes: readonly EntityRouteDeclaration[]): EntityRoute[] {
  return routes.map((route) => [
    route.method,
    expressPath(route, `${API_PREFIX}/${route.entity}`),
    entityHandler(ctx, route),
  ]);
}

/** The Express router of one entity, to mount at `/{plural}`. */
export function buildEntityRouter(ctx: RuntimeContext, routes: readonly EntityRouteDeclaration[]): Router {
  const router = exactRouter();
  for (const [method, path, handler] of entityRouteHandlers(ctx, routes))
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
