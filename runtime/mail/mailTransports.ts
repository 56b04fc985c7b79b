import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailConfig } from '../config/runtimeConfig.js';
import type { MailTransport, OutgoingMail } from './mailOutbox.js';

/** A server that has not answered in this time fails the attempt (it is retried later). */
const TIMEOUT_MS = 20_000;

/** SMTP through nodemailer: the URL's host, port, credentials and smtps:, with the config's TLS options. */
export function smtpTransport(config: MailConfig & { url: string }): MailTransport {
  // nodemailer is loaded with the first mail, not by every server at start.
  let opening: Promise<Transporter> | undefined;
  const transporter = () =>
    (opening ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        url: config.url,
        requireTLS: config.tls.requireTLS,
        tls: { rejectUnauthorized: config.tls.rejectUnauthorized },
        connectionTimeout: TIMEOUT_MS,
        greetingTimeout: TIMEOUT_MS,
        socketTimeout: TIMEOUT_MS,
        // Messages come from templates: nothing in them may make nodemailer read files or URLs.
        disableFileAccess: true,
        disableUrlAccess: true,
      }),
    ));
  return {
    kind: 'smtp',
    async send(from: string, mail: OutgoingMail) {
      const { to, subject, text, html } = mail;
      await (await transporter()).sendMail({ from, to, subject, text, html });
    },
    // A transporter that never opened has nothing to close.
    close: () =>
      void opening?.then(
        (opened) => opened.close(),
        () => undefined,
      ),
  };
}

/** No mail server configured: the mail is written to the log, where a developer reads it. */
export function logTransport(logger: Logger): MailTransport {
  return {
    kind: 'log',
    async send(from: string, mail: OutgoingMail) {
      logger.info(
        { mail: { from, to: mail.to, subject: mail.subject, text: mail.text } },
        'mail (no mail server configured: logged instead of sent)',
      );
    },
  };
}
