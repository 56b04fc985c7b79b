import type { RoleTable } from '../access/roleTable.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { OutgoingMail } from '../mail/mailOutbox.js';
import type { MailTemplates } from '../mail/mailTemplates.js';
import type { MailTestResult } from '../mail/testMail.js';
import type { SessionCookie } from './sessionCookie.js';

export type MailMessage = OutgoingMail;

/** Takes a mail to send; the server's queues it in the outbox (runtime/mail/mailOutbox.ts). */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** What the identity endpoints need beyond the runtime context. */
export interface AuthContext {
  ctx: RuntimeContext;
  config: RuntimeConfig;
  roles: RoleTable;
  cookieName: string;
  /** Sets and clears the session cookie, Secure as server.cookies.secure says. */
  cookie: SessionCookie;
  mailer: Mailer;
  templates: MailTemplates;
  env: NodeJS.ProcessEnv;
  /** Where browsers reach the server (server.publicUrl, else the address it listens on): OIDC redirects. */
  publicUrl(): string;
  /** The address the server listens on, once it does (startServer). */
  listeningUrl?: string;
  /** Sends a test mail now, past the outbox, and reports the server's answer. */
  testMail(to: string): Promise<MailTestResult>;
}
