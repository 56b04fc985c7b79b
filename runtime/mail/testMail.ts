import { validationError } from '../errors/apiError.js';
import { EMAIL_PATTERN, normalizeEmail } from '../model/patterns.js';
import type { MailTransport } from './mailOutbox.js';
import type { MailTemplates } from './mailTemplates.js';

/** What a mail-settings test reports: delivered or not, by which transport, and what the server said. */
export interface MailTestResult {
  ok: boolean;
  transport: 'smtp' | 'log';
  to: string;
  message: string;
}

/**
 * Sends one test mail now, past the outbox (the point is to see the server's answer), and says
 * how it went; a refusal is a result, not an error.
 */
export async function sendTestMail(
  transport: MailTransport,
  from: string,
  templates: MailTemplates,
  appName: string,
  to: string,
): Promise<MailTestResult> {
  const address = normalizeEmail(to);
  if (!EMAIL_PATTERN.test(address)) throw validationError({ to: 'must be an email address' });
  const mail = templates.render('testMail', { appName });
  try {
    await transport.send(from, { to: address, ...mail, template: 'testMail' });
  } catch (error) {
    return {
      ok: false,
      transport: transport.kind,
      to: address,
      message: String((error as Error).message).slice(0, 500),
    };
  }
  return {
    ok: true,
    transport: transport.kind,
    to: address,
    message:
      transport.kind === 'smtp'
        ? `The mail server accepted a test mail for ${address}`
        : 'No mail server is configured (MAIL_URL or mail.url): the test mail was written to the server log',
  };
}
