import express, { type Express } from 'express';
import type { RoleTable } from '../access/roleTable.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context.js';
import { authenticate } from './authenticate.js';
import { correlationId } from './correlationId.js';
import { buildEntityRouter } from './entityRoutes.js';
import { errorHandler, notFoundHandler } from './errorHandler.js';
import { jsonBody } from './jsonBody.js';
import { schemaRoutes } from './schemaRoutes.js';

export interface AppOptions {
  ctx: RuntimeContext;
  config: RuntimeConfig;
  roles: RoleTable;
}

export const API_PREFIX = '/api/v1';

/** The Express app: correlation id -> body -> authenticate -> routes -> 404 -> error envelope. */
export function createApp({ ctx, config, roles }: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // Responses are per caller and marked no-store; hashing every body for an ETag buys nothing.
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', config.server.trustProxy);
  app.use(correlationId());
  app.use(jsonBody());
  app.use(
    authenticate({
      store: ctx.store,
      roles,
      secret: ctx.secrets.signing,
      cookieName: `${ctx.registry.model.app.name}_uid`,
      sessionTtlMs: config.sessionTtlMs,
      now: ctx.now,
    }),
  );
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
