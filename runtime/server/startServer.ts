import type { Server } from 'node:http';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { RoleTable } from '../access/roleTable.js';
import { loadRuntimeConfig, type RuntimeConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context.js';
import { FieldCipher } from '../crypto/fieldCipher.js';
import { loadSecrets } from '../crypto/secrets.js';
import type { Registry } from '../defineRegistry.js';
import { createApp } from '../http/createApp.js';
import { logMailer, type AuthContext, type Mailer } from '../auth/authContext.js';
import { createFirstAdmin, hasAdmin, SetupState } from '../auth/setup.js';
import { openStore } from '../store/openStore.js';

export interface StartOptions {
  registry: Registry;
  /** Project folder: config, data/ and development secrets live here. */
  root: string;
  env?: NodeJS.ProcessEnv;
  port?: number;
  host?: string;
  logger?: Logger;
  /** Sends password-reset mail; default: written to the log. */
  mailer?: Mailer;
}

export interface RunningServer {
  server: Server;
  url: string;
  ctx: RuntimeContext;
  config: RuntimeConfig;
  auth: AuthContext;
  close(): Promise<void>;
}

/** ENTIGEN_ADMIN_EMAIL and ENTIGEN_ADMIN_PASSWORD create the first admin headless, once. */
async function bootstrapAdmin(auth: AuthContext, env: NodeJS.ProcessEnv): Promise<void> {
  if (!env.ENTIGEN_ADMIN_EMAIL || !env.ENTIGEN_ADMIN_PASSWORD || (await hasAdmin(auth.ctx.store))) return;
  await createFirstAdmin(auth.ctx, auth.config.passwordPolicy, {
    email: env.ENTIGEN_ADMIN_EMAIL,
    password: env.ENTIGEN_ADMIN_PASSWORD,
    name: env.ENTIGEN_ADMIN_NAME ?? 'Administrator',
    tenantName: env.ENTIGEN_ADMIN_TENANT ?? 'Default',
  });
  auth.ctx.logger.info({ email: env.ENTIGEN_ADMIN_EMAIL }, 'created the first administrator from ENTIGEN_ADMIN_EMAIL');
}

/** Opens the store, prepares its schema, and listens. */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? pino({ level: env.LOG_LEVEL ?? 'info' });
  const config = loadRuntimeConfig(options.root, env);
  const secrets = loadSecrets({ env, devFile: join(options.root, 'data', 'secrets.json'), warn: (message) => logger.warn(message) });
  const store = openStore(env.DATABASE_URL, options.root);
  await store.init(options.registry.model);
  const ctx: RuntimeContext = {
    registry: options.registry,
    store,
    secrets,
    cipher: new FieldCipher(secrets.encryption),
    logger,
    now: () => new Date(),
  };
  const roles = new RoleTable(options.registry.model, store);
  const auth: AuthContext = {
    ctx,
    config,
    roles,
    cookieName: `${options.registry.model.app.name}_uid`,
    mailer: options.mailer ?? logMailer(ctx),
    env,
  };
  await bootstrapAdmin(auth, env);
  const app = createApp({ auth, setup: new SetupState(store) });
  const port = options.port ?? config.server.port;
  const host = options.host ?? config.server.host;
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${boundPort}`;
  logger.info({ url, store: store.kind }, 'entigen listening');
  return {
    server,
    url,
    ctx,
    config,
    auth,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
