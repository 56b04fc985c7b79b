import type { MailTemplate } from '../mail/mailTemplates.js';
import { traceOf } from '../store/tracedStore.js';
import type { Store, Where } from '../store/types.js';
import { traceparentOf } from '../telemetry/tracing.js';
import type { AuthContext } from './authContext.js';

/** A link in a mail: `<mail.linkBase><path>?token=...` (the front end's page posts the token). */
export function linkTo(auth: AuthContext, path: string, token: string): string {
  return `${auth.config.mail.linkBase ?? `http://localhost:${auth.config.server.port}`}${path}?token=${token}`;
}

/** A mail from a template with the app's name, into the outbox. */
export async function sendAccountMail(
  auth: AuthContext,
  to: string,
  template: MailTemplate,
  values: Record<string, string>,
): Promise<void> {
  const rendered = auth.templates.render(template, { appName: auth.ctx.registry.model.app.name, ...values });
  const traceparent = traceparentOf(traceOf(auth.ctx.store));
  await auth.mailer.send({ to, ...rendered, template, ...(traceparent ? { traceparent } : {}) });
}

/** Marks the unused single-use tokens of a user (reset or address tokens) used now. */
export async function endTokens(store: Store, collection: string, userId: string, now: string, where?: Where) {
  const outstanding = await store.find(collection, {
    where: {
      and: [
        { field: 'userId', op: 'eq', value: userId },
        { field: 'usedAt', op: 'exists', value: false },
        ...(where ? [where] : []),
      ],
    },
    select: ['id'],
    limit: 1000,
  });
  for (const { id } of outstanding) await store.update(collection, id, { usedAt: now, updatedAt: now });
}
