import { RoleTable } from '../../access/roleTable.js';
import type { AuthContext } from '../../auth/authContext.js';
import { sessionCookie } from '../../auth/sessionCookie.js';
import { createFirstAdmin, hasAdmin } from '../../auth/setup.js';
import { SYSTEM_CALLER } from '../../context/caller.js';
import { contextInTrace } from '../../context/carryTrace.js';
import { hookTable } from '../../context/defineRegistry.js';
import type { WriteOrigin } from '../../context/hookTypes.js';
import type { RuntimeContext } from '../../context/runtimeContext.js';
import { FieldCipher } from '../../crypto/fieldCipher.js';
import { mediaFiles } from '../../files/mediaFiles.js';
import { MailOutbox } from '../../mail/mailOutbox.js';
import { MailTemplates } from '../../mail/mailTemplates.js';
import { logTransport, smtpTransport } from '../../mail/mailTransports.js';
import { sendTestMail } from '../../mail/testMail.js';
import { withMediaCleanup } from '../../media/mediaCleanup.js';
import { MEDIA_ASSETS } from '../../model/collections.js';
import type { Context } from '../../telemetry/tracing.js';
import { ensureEventSequence } from '../../write/eventLog.js';
import { repositoryWriter } from '../../write/writePipeline.js';
import { featureRules } from '../features.js';
import type { Base } from './base.js';
import type { Stores } from './store.js';

export interface Services {
  ctx: RuntimeContext;
  auth: AuthContext;
  outbox: MailOutbox;
  /** The typed repositories of jobs and afterCommit hooks: they act as the system. */
  systemRepositories(origin: WriteOrigin, trace?: Context): unknown;
}

/** The context every operation takes: the registry, the store, the secrets, the composed feature rules, the hooks. */
export function runtimeContext({ options, config, secrets, logger, now }: Base, { store }: Stores): RuntimeContext {
  const hooks = options.hooks
    ? hookTable(options.registry.entities, options.hooks)
    : (options.registry.hooks ?? new Map());
  const media = options.registry.entities.has(MEDIA_ASSETS) ? mediaFiles(config.uploads, options.root) : undefined;
  const ctx: RuntimeContext = {
    registry: options.registry,
    store,
    secrets,
    cipher: new FieldCipher(secrets.encryption),
    rules: featureRules(options.registry.model, config, Object.keys(options.handlers ?? {})),
    // A media asset's files go with its record, through the event log.
    hooks: media ? withMediaCleanup(hooks, media.storage) : hooks,
    media,
    logger,
    now,
  };
  // Repositories handed to hooks write in the hook's transaction; those of jobs and afterCommit
  // hooks start their own. Either way their writes run the entity's hooks and reach the event log.
  ctx.repositoriesFor = (scope) =>
    options.repositories?.(
      scope.ctx.store,
      repositoryWriter(() => scope),
    );
  return ctx;
}

/**
 * Mail (a durable queue; without a server, the log) and identity (roles, the session cookie, the
 * public URL); then the first administrator from the environment and the event log's sequence.
 */
export async function withServices(base: Base, stores: Stores): Promise<Services> {
  const { options, config, secrets, logger, operator, env } = base;
  const ctx = runtimeContext(base, stores);
  const { url: mailUrl } = config.mail;
  if (!mailUrl) logger.info('mail is not configured (MAIL_URL or mail.url): mails are written to the log');
  const transport = mailUrl ? smtpTransport({ ...config.mail, url: mailUrl }) : logTransport(logger);
  const outbox = new MailOutbox(
    ctx,
    config.mail,
    transport,
    new FieldCipher(`mail:${secrets.encryption ?? secrets.signing}`),
    logger,
    config.mail.pollMs,
  );
  operator.watch('entigen_mails_sent', 'Mails this instance delivered to the mail server', () => outbox.sent);
  operator.watch(
    'entigen_mail_attempts_failed',
    'Mail attempts that failed (retried or failed)',
    () => outbox.failedAttempts,
  );
  const templates = new MailTemplates(options.root);
  const auth: AuthContext = {
    ctx,
    config,
    roles: new RoleTable(options.registry.model, stores.store),
    cookieName: `${options.registry.model.app.name}_uid`,
    cookie: sessionCookie(
      `${options.registry.model.app.name}_uid`,
      config.sessionTtlMs,
      config.server.cookies.secure,
      config.server.publicUrl,
    ),
    mailer: options.mailer ?? { send: (mail) => outbox.enqueue(mail) },
    templates,
    env,
    publicUrl: () => config.server.publicUrl ?? auth.listeningUrl ?? `http://localhost:${config.server.port}`,
    testMail: (to) => sendTestMail(transport, config.mail.from, templates, options.registry.model.app.name, to),
  };
  await bootstrapAdmin(auth, env);
  await ensureEventSequence(stores.store);
  // A job run's or an afterCommit delivery's: their calls belong to its span when it is traced.
  const systemRepositories = (origin: WriteOrigin, trace?: Context) => {
    const traced = contextInTrace(ctx, trace);
    return options.repositories?.(
      traced.store,
      repositoryWriter(() => ({ ctx: traced, caller: SYSTEM_CALLER, now: ctx.now(), origin, depth: 0, path: [] })),
    );
  };
  return { ctx, auth, outbox, systemRepositories };
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
