import express, { type Express } from 'express';
import type { AuthContext } from '../auth/authContext.js';
import type { SetupState } from '../auth/setup.js';
import { apiKeyRoutes } from './apiKeyRoutes.js';
import { authenticate } from './authenticate.js';
import { authRoutes } from './authRoutes.js';
import { correlationId } from './correlationId.js';
import { buildEntityRouter } from './entityRoutes.js';
import { errorHandler, notFoundHandler } from './errorHandler.js';
import { jsonBody } from './jsonBody.js';
import { roleRoutes } from './roleRoutes.js';
import { schemaRoutes } from './schemaRoutes.js';
import { setupGate, setupRoutes } from './setupRoutes.js';
import { userRoutes } from './userRoutes.js';

export interface AppOptions {
  auth: AuthContext;
  setup: SetupState;
}

export const API_PREFIX = '/api/v1';

/** The Express app: correlation id -> setup gate -> body -> authenticate -> routes -> 404 -> error envelope. */
export function createApp({ auth, setup }: AppOptions): Express {
  const { ctx, config } = auth;
  const app = express();
  app.disable('x-powered-by');
  // Responses are per caller and marked no-store; hashing every body for an ETag buys nothing.
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', config.server.trustProxy);
  app.use(correlationId());
  app.use(setupGate(setup));
  app.use(setupRoutes(auth, setup));
  app.use(jsonBody());
  app.use(
    authenticate({
      store: ctx.store,
      roles: auth.roles,
      secret: ctx.secrets.signing,
      cookieName: auth.cookieName,
      sessionTtlMs: config.sessionTtlMs,
      now: ctx.now,
    }),
  );
  app.use(`${API_PREFIX}/auth`, authRoutes(auth));
  app.use(`${API_PREFIX}/users`, userRoutes(auth));
  app.use(`${API_PREFIX}/roles`, roleRoutes(auth));
  app.use(`${API_PREFIX}/apikeys`, apiKeyRoutes(auth));
  app.use(`${API_PREFIX}/schema`, schemaRoutes(ctx.registry.model));
  for (const entity of ctx.registry.entities.values()) {
    if (entity.routes.length === 0) continue;
    // Mounted under its own prefix, so a request only walks the routes of its entity.
    const router = buildEntityRouter(ctx, { plural: entity.model.plural, validators: entity.validators, routes: entity.routes });
    app.use(`${API_PREFIX}/${entity.model.plural}`, router);
  }
  app.use(notFoundHandler);
  app.use(errorHandler(ctx.logger));
  return app;
}
