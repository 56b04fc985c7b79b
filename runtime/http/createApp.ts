import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import { match } from 'path-to-regexp';
import { entityRoutes as entityDeclarationsOf } from '../api/entityRoutes.js';
import { auth as authApi, features, fixedRoutes, pages } from '../api/index.js';
import { type AnyRoute, expressPath } from '../api/route.js';
import type { AuthContext } from '../auth/authContext.js';
import { OAuth2Clients } from '../auth/oauth2.js';
import { OidcClients } from '../auth/oidc.js';
import type { SetupState } from '../auth/setup.js';
import type { BusState } from '../cluster/busWatch.js';
import { MCP_TIER } from '../config/runtimeConfig.js';
import { FieldCipher } from '../crypto/fieldCipher.js';
import { eventStatistics } from '../events/eventStats.js';
import type { RealtimeHub } from '../events/realtime/realtimeHub.js';
import { healthRoute } from '../health/healthRoute.js';
import type { Metrics } from '../health/metrics.js';
import { metricsRoute } from '../health/metricsRoute.js';
import type { OperatorMetrics } from '../health/operatorMetrics.js';
import { MEDIA_ASSETS } from '../model/collections.js';
import { tracingOn } from '../telemetry/tracing.js';
import { ADMIN_PATH, adminRoutes } from './adminRoutes.js';
import { API_KEYS_PATH, apiKeyRoutes } from './apiKeyRoutes.js';
import { authenticate } from './authenticate.js';
import { authRoutes } from './authRoutes.js';
import { BATCH_PATH, batchRoutes } from './batchRoutes.js';
import { canonicalPath, withoutTrailingSlash } from './canonicalPath.js';
import { compose, MountTable } from './compose.js';
import { compressAnswers } from './compressAnswers.js';
import { correlationId } from './correlationId.js';
import { corsPolicy } from './corsPolicy.js';
import { DeclaredRouter } from './declaredRouter.js';
import { DOCS_PATH, docsRoutes } from './docsRoutes.js';
import { DOCS_SITE_PATH, docsSiteRoutes } from './docsSiteRoutes.js';
import { type DrainState, refuseWhileDraining } from './draining.js';
import { EntityRouteTable, entityLane } from './entityLane.js';
import { buildEntityRouter, entityRouteHandlers } from './entityRoutes.js';
import { errorHandler, notFoundHandler } from './errorHandler.js';
import { idempotency } from './idempotency.js';
import { IMPORT_PATH, importRoutes } from './importRoutes.js';
import { jsonBody } from './jsonBody.js';
import { mcpChallenge } from './mcpRoutes.js';
import { methodNotAllowed, RouteTable } from './methodNotAllowed.js';
import { mfaRoutes } from './mfaRoutes.js';
import { type NodeListener, nodeListener } from './nodeAdapter.js';
import { OIDC_MFA_FORM_PATH, oidcRoutes } from './oidcRoutes.js';
import { identifyCaller } from './rateLimit/identifyCaller.js';
import type { LimiterStore } from './rateLimit/limiterStore.js';
import { rateLimit } from './rateLimit/rateLimit.js';
import { REALTIME_PATH, realtimeRoutes } from './realtimeRoutes.js';
import { refusePrototypeKeys } from './refusePrototypeKeys.js';
import { refuseUnstorableInput } from './refuseUnstorableInput.js';
import { requestLog } from './requestLog.js';
import { requireMfaEnrollment } from './requireMfaEnrollment.js';
import { requireVerifiedEmail } from './requireVerifiedEmail.js';
import { ROLES_PATH, roleRoutes } from './roleRoutes.js';
import { SCHEMA_PATH, schemaRoutes } from './schemaRoutes.js';
import { securityHeaders } from './securityHeaders.js';
import { setupGate, setupRoutes } from './setupRoutes.js';
import { traceRequests } from './traceRequests.js';
import { USERS_PATH, userRoutes } from './userRoutes.js';

export interface AppOptions {
  auth: AuthContext;
  setup: SetupState;
  limiter: LimiterStore;
  metrics: Metrics;
  drain: DrainState;
  /** Extra services for the health report (Redis). */
  services: Record<string, () => Promise<void>>;
  /** The routers of the app's features, by prefix (runtime/server/features.ts). */
  featureRouters: readonly [prefix: string, router: Router][];
  /** Prometheus numbers for GET /api/metrics. */
  operator: OperatorMetrics;
  /** The open realtime streams (GET /api/v1/realtime). */
  realtime: RealtimeHub;
  /** The bus between instances, for the health report; none with one instance. */
  cluster?: () => BusState;
}

export const API_PREFIX = '/api/v1';
export const HEALTH_PATH = pages.health.path;

/**
 * The pipeline of the spec: correlation id -> rate limit -> authentication -> idempotency ->
 * route; then 405/404 and the error envelope. Returns the app and the table of its routes.
 */
export function createApp({
  auth,
  setup,
  limiter,
  metrics,
  drain,
  services,
  featureRouters,
  operator,
  realtime,
  cluster,
}: AppOptions): { app: Express; routes: RouteTable; listener: NodeListener } {
  const { ctx, config } = auth;
  const declared = fixedRoutes(ctx.registry.model);
  const app = express();
  const routes = new RouteTable();
  const clock = () => ctx.now().getTime();
  app.disable('x-powered-by');
  // Responses are per caller and marked no-store; hashing every body for an ETag buys nothing.
  app.set('etag', false);
  app.set('query parser', 'extended');
  // One spelling of a path routes, the one every policy reads (exactRouter.ts).
  app.set('case sensitive routing', true);
  app.set('trust proxy', config.server.trustProxy);

  const identity = {
    store: ctx.store,
    secret: ctx.secrets.signing,
    cookieName: auth.cookieName,
    sessionTtlMs: config.sessionTtlMs,
    clock,
  };
  // One layer for what every request passes through first (compose.ts: fewer layers to match).
  const front = compose(
    correlationId(),
    config.server.compression ? compressAnswers() : undefined,
    requestLog(ctx.logger, metrics, operator, (method, path) => routes.routeOf(method, path)),
    securityHeaders(),
    corsPolicy(config.cors),
    refuseWhileDraining(drain),
    rateLimit({
      tiers: { ...config.rateLimit, mcp: config.rateLimit.mcp ?? MCP_TIER },
      store: limiter,
      clock,
      identify: identifyCaller({ ...identity, authTier: authTierOutsidePrefix(declared) }),
      logger: ctx.logger,
      exempt: declared.filter((route) => route.rateLimit === 'exempt').map((route) => route.path),
      onRefused: (tier) => operator.rateLimited(tier),
    }),
  );
  const authenticateCaller = authenticate({
    store: ctx.store,
    roles: auth.roles,
    secret: ctx.secrets.signing,
    cookieName: auth.cookieName,
    sessionTtlMs: config.sessionTtlMs,
    now: ctx.now,
  });
  const gate = setupGate(setup);
  const media = ctx.registry.entities.has(MEDIA_ASSETS);
  const body = compose(
    // Uploads and the OpenID code form read their own bodies.
    jsonBody(
      undefined,
      (req) =>
        req.method === 'POST' &&
        ((media && req.path === features.upload.path) ||
          req.path === OIDC_MFA_FORM_PATH ||
          req.path.startsWith(`${IMPORT_PATH}/`)),
    ),
    refusePrototypeKeys(),
    refuseUnstorableInput({
      readsOnly: (req) => req.method === 'POST' && canonicalPath(req) === `${API_PREFIX}/auth/login`,
    }),
    authenticateCaller,
    requireVerifiedEmail(config.emailVerification, `${API_PREFIX}/auth`),
    requireMfaEnrollment(config.mfa.requiredFor, `${API_PREFIX}/auth`),
    // After authentication: a stored answer is replayed only to the caller who made it (docs/departures.md).
    idempotency({
      store: ctx.store,
      clock,
      logger: ctx.logger,
      cipher: new FieldCipher(`idempotency:${ctx.secrets.encryption ?? ctx.secrets.signing}`),
      onReplay: () => operator.idempotencyReplayed(),
    }),
  );
  const errors = errorHandler(ctx.logger);
  const entityRoutes = new EntityRouteTable(API_PREFIX);
  // Plain entity routes run these same stages and their handler in one layer (entityLane.ts);
  // the table is filled below, with the entity routers.
  const stages = { front, gate, body, routes: entityRoutes, errors };
  app.use(entityLane(stages));
  app.use(front);
  // Health answers even while the database or setup would stop everything else.
  const health = healthRoute({
    ctx,
    metrics,
    services,
    authenticate: authenticateCaller,
    events: () => eventStatistics(ctx, realtime.size),
    cluster,
  });
  const metricsAnswer = metricsRoute({ operator, token: config.metrics.token, authenticate: authenticateCaller });
  const operations = new DeclaredRouter()
    .raw(pages.health, ({ req, res }) => health(req, res))
    .raw(pages.metrics, ({ req, res, next }) => metricsAnswer(req, res, next));
  routes.addRouter('', operations.router);
  app.use(operations.router);
  const setupRouter = setupRoutes(auth, setup);
  routes.addRouter('', setupRouter);
  // The setup router is entered only for its own paths (compared as Express does: exact case, one trailing slash).
  const setupPaths = new Set(routerPaths(setupRouter).map(withoutTrailingSlash));
  app.use(gate, (req: Request, res: Response, next: NextFunction) =>
    setupPaths.has(canonicalPath(req)) ? setupRouter(req, res, next) : next(),
  );
  if (ctx.registry.openapi) {
    const docs = docsRoutes(ctx.registry.openapi, ctx.registry.model.app.name);
    routes.addRouter(DOCS_PATH, docs);
    app.use(DOCS_PATH, docs);
  }
  // The admin console: a page and its assets; what it shows comes from the API below.
  const admin = adminRoutes();
  routes.addRouter(ADMIN_PATH, admin);
  app.use(ADMIN_PATH, admin);
  // entigen's documentation site, when it is built beside the package.
  const site = docsSiteRoutes();
  routes.addRouter(DOCS_SITE_PATH, site);
  app.use(DOCS_SITE_PATH, site);
  app.use(mcpChallenge(ctx.registry.model.app.name));
  app.use(body);
  const mounts = new MountTable(API_PREFIX);
  const mount = (prefix: string, router: Router) => {
    routes.addRouter(prefix, router);
    mounts.add(prefix, rememberMount(prefix), router);
  };
  mount(authApi.AUTH_PATH, authRoutes(auth));
  mount(authApi.AUTH_PATH, mfaRoutes(auth));
  mount(authApi.AUTH_PATH, oidcRoutes(auth, new OidcClients(config.oidc), new OAuth2Clients(config.oauth2)));
  mount(USERS_PATH, userRoutes(auth));
  mount(ROLES_PATH, roleRoutes(auth));
  mount(API_KEYS_PATH, apiKeyRoutes(auth));
  mount(SCHEMA_PATH, schemaRoutes(ctx.registry.model));
  mount(REALTIME_PATH, realtimeRoutes({ ctx, hub: realtime, identify: authenticateCaller.identify }));
  mount(IMPORT_PATH, importRoutes(ctx));
  mount(BATCH_PATH, batchRoutes(ctx));
  // The features' routers (runtime/server/features.ts), ahead of the entities: some share an entity's prefix.
  // A feature outside the API (the MCP server at /mcp) is mounted on its own path.
  for (const [prefix, router] of featureRouters) {
    if (prefix.startsWith(`${API_PREFIX}/`)) mount(prefix, router);
    else {
      routes.addRouter('', router);
      app.use(router);
    }
  }
  const byPlural = new Map(ctx.registry.model.entities.map((e) => [e.plural, e]));
  for (const entity of ctx.registry.entities.values()) {
    const declared = entityDeclarationsOf(entity.model, byPlural);
    if (declared.length === 0) continue;
    const prefix = `${API_PREFIX}/${entity.model.plural}`;
    // An entity alone on its prefix may be served by the entity lane (entityLane.ts); a feature router
    // mounted before it (media, jobs, webhooks) keeps the whole prefix on the Express path.
    if (!mounts.has(prefix)) entityRoutes.add(entity.model.plural, entityRouteHandlers(ctx, declared));
    // Mounted under its own prefix, so a request only walks the routes of its entity.
    mount(prefix, buildEntityRouter(ctx, declared));
  }
  app.use(mounts.handler());
  app.use(methodNotAllowed(routes));
  app.use(notFoundHandler);
  app.use(errors);
  const served = config.server.adapter === 'node' ? nodeListener(app, stages) : (app as unknown as NodeListener);
  // With traces on, a server span around each request (in front of either adapter).
  const listener = tracingOn() ? traceRequests(served, (method, path) => routes.routeOf(method, path)) : served;
  return { app, routes, listener };
}

/** Keeps the mount point of the router about to run, for route labels (req.baseUrl is reset when it throws). */
function rememberMount(prefix: string) {
  return function rememberMount(_req: Request, res: Response, next: NextFunction): void {
    res.locals.mountPath = prefix;
    next();
  };
}

function routerPaths(router: Router): string[] {
  return (router.stack as { route?: { path: string } }[]).flatMap((layer) => (layer.route ? [layer.route.path] : []));
}

/**
 * The declared auth-tier routes outside /api/v1/auth/ (which counts in the tier by its prefix), as
 * a matcher; none today, so the rate limit of every request tests one prefix and nothing more.
 */
function authTierOutsidePrefix(declared: readonly AnyRoute[]): ((path: string) => boolean) | undefined {
  const matchers = declared
    .filter((route) => route.rateLimit === 'auth' && !route.path.startsWith(`${authApi.AUTH_PATH}/`))
    .map((route) => match(expressPath(route), { decode: false }));
  return matchers.length === 0 ? undefined : (path) => matchers.some((matches) => matches(path) !== false);
}
