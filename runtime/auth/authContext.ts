import type { RoleTable } from '../access/roleTable.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends password-reset mail; the default writes it to the log. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** What the identity endpoints need beyond the runtime context. */
export interface AuthContext {
  ctx: RuntimeContext;
  config: RuntimeConfig;
  roles: RoleTable;
  cookieName: string;
  mailer: Mailer;
  env: NodeJS.ProcessEnv;
}

export function logMailer(ctx: RuntimeContext): Mailer {
  return {
    async send(message) {
      ctx.logger.info({ mail: message }, 'mail (no mailer configured: logged instead of sent)');
    },
  };
}
