import { Writable } from 'node:stream';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import type { MailConfig } from '../../runtime/config/runtimeConfig.js';

export interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server in this process (smtp-server); what arrives is kept in `received`. */
export async function smtpServer(options: { port?: number; tls?: boolean } = {}) {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain by default; with tls, STARTTLS on smtp-server's own self-signed certificate.
    disabledCommands: options.tls ? ['AUTH'] : ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (raw += chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return { received, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The text a mail says, quoted-printable decoded. */
export function textOf(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The code a mail carries ("paste this code where the app asks for it"). */
export const resetCode = (raw: string) => /asks for it: ([\w-]+)/.exec(textOf(raw))![1];

export function mailConfig(port: number, extra: Partial<MailConfig> = {}): MailConfig {
  return {
    url: `smtp://127.0.0.1:${port}`,
    from: 'Example App <no-reply@example.test>',
    linkBase: 'https://app.example.test',
    attempts: 4,
    backoffMs: 300,
    pollMs: 100,
    tls: { rejectUnauthorized: true, requireTLS: false },
    ...extra,
  };
}

export const LIMITS = {
  auth: { limit: 1_000_000, window: 60 },
  api: { limit: 1_000_000, window: 60 },
  public: { limit: 1_000_000, window: 60 },
};

/** Every line the server logs, as text. */
export function capturingLogger() {
  const lines: string[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  return { logger, text: () => lines.join('') };
}
