import type { Logger } from 'pino';
import type { MailConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { FieldCipher } from '../crypto/fieldCipher.js';
import { OUTGOING_MAILS } from '../model/collections.js';
import type { Doc } from '../store/types.js';
import { continueTrace, detached, SpanKind } from '../telemetry/tracing.js';
import { newId } from '../write/prepareWrite.js';

/** A mail as the runtime asks for it to be sent. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** The template it came from, for the administrators' view. */
  template?: string;
  /** The W3C traceparent of the request that asked for it, when traces are on: sending continues that trace. */
  traceparent?: string;
}

/** What delivers one mail to its server; throws when the server refuses or cannot be reached. */
export interface MailTransport {
  readonly kind: 'smtp' | 'log';
  send(from: string, mail: OutgoingMail): Promise<void>;
  close?(): void;
}

/** Mails looked at per pass. */
const BATCH = 20;
/** How long one instance holds a mail it is sending before another may take it (a crash mid-send). */
const LEASE_MS = 120_000;
/** A lost notice is made up by polling this often. */
const POLL_MS = 5_000;
/** Retries wait at most this long. */
const MAX_BACKOFF_MS = 6 * 3_600_000;
/** lastError is cut to this length (an SMTP answer can be long). */
const MAX_ERROR = 500;

/**
 * The durable way out for mail: `enqueue` writes the mail to `outgoingMails` (its bodies sealed
 * with the app's key, since they carry single-use tokens) and returns; the dispatcher sends it,
 * retrying with doubling delays up to `mail.attempts`, then leaves it `failed` with its last
 * error for an administrator, who sets it back to `pending` to try again. Sending never blocks
 * or fails the request that asked for the mail. One instance sends a given mail: it takes the
 * mail by a conditional update (status pending -> sending, with a lease), so instances sharing a
 * store never send it twice, and a mail whose sender died returns to the queue when its lease
 * ends. A sent mail keeps its address, subject and time; its bodies are dropped.
 */
export class MailOutbox {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  /** Mails this instance sent, and attempts that failed (operator metrics). */
  sent = 0;
  failedAttempts = 0;

  constructor(
    private readonly ctx: RuntimeContext,
    private readonly config: MailConfig,
    private readonly transport: MailTransport,
    private readonly cipher: FieldCipher,
    private readonly logger: Logger,
    private readonly pollMs = POLL_MS,
  ) {}

  async enqueue(mail: OutgoingMail): Promise<void> {
    const now = this.ctx.now().toISOString();
    await this.ctx.store.insert(OUTGOING_MAILS, {
      id: newId(),
      to: mail.to,
      subject: mail.subject,
      template: mail.template ?? null,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      leaseUntil: null,
      lastError: null,
      sentAt: null,
      sealedBody: this.cipher.encrypt(JSON.stringify({ text: mail.text, html: mail.html ?? null })),
      trace: mail.traceparent ?? null,
      createdAt: now,
      updatedAt: now,
    });
    this.notify();
  }

  start(): void {
    this.timer = setInterval(() => this.notify(), this.pollMs);
    this.timer.unref();
    this.notify();
  }

  /** Something was queued (or an admin set a mail back to pending): look soon. */
  notify(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    // The pass sends whatever is due, for every request: it runs outside the trace of the one that woke it.
    this.running = detached(() => this.pass())
      .catch((error) => this.logger.error({ err: error }, 'mail outbox pass failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          setImmediate(() => this.notify());
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    this.transport.close?.();
  }

  private async pass(): Promise<void> {
    const now = this.ctx.now();
    const due = await this.ctx.store.find(OUTGOING_MAILS, {
      where: {
        or: [
          {
            and: [
              { field: 'status', op: 'eq', value: 'pending' },
              { field: 'nextAttemptAt', op: 'lte', value: now.toISOString() },
            ],
          },
          // Taken by a sender that did not finish (a crash): its lease has ended (or an admin set it so).
          {
            and: [
              { field: 'status', op: 'eq', value: 'sending' },
              {
                or: [
                  { field: 'leaseUntil', op: 'lt', value: now.toISOString() },
                  { field: 'leaseUntil', op: 'exists', value: false },
                ],
              },
            ],
          },
        ],
      },
      sort: [{ field: 'nextAttemptAt', direction: 'asc' }],
      limit: BATCH,
    });
    for (const mail of due) {
      if (this.stopped) return;
      const taken = await this.take(mail, now);
      if (taken) await this.deliver(taken);
    }
    if (due.length === BATCH) this.again = true;
  }

  /** The mail, if this instance got it: the update applies only while it is still as it was read. */
  private take(mail: Doc, now: Date): Promise<Doc | null> {
    return this.ctx.store.update(
      OUTGOING_MAILS,
      mail.id,
      {
        status: 'sending',
        leaseUntil: new Date(now.getTime() + LEASE_MS).toISOString(),
        updatedAt: now.toISOString(),
      },
      {
        and: [
          { field: 'status', op: 'eq', value: mail.status },
          { field: 'updatedAt', op: 'eq', value: mail.updatedAt },
        ],
      },
    );
  }

  private async deliver(mail: Doc): Promise<void> {
    const attempts = (mail.attempts as number) + 1;
    try {
      if (typeof mail.sealedBody !== 'string') throw new Error('the mail has no body (it was sent before)');
      const body = JSON.parse(this.cipher.decrypt(mail.sealedBody)) as { text: string; html: string | null };
      // A span in the trace of the request that queued the mail (never the address or the text).
      await continueTrace(
        mail.trace as string | null | undefined,
        'mail send',
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'entigen.mail.template': (mail.template as string | null) ?? 'none',
            'entigen.mail.attempt': attempts,
          },
        },
        () =>
          this.transport.send(this.config.from, {
            to: mail.to as string,
            subject: mail.subject as string,
            text: body.text,
            ...(body.html ? { html: body.html } : {}),
          }),
      );
      this.sent++;
      const at = this.ctx.now().toISOString();
      await this.ctx.store.update(OUTGOING_MAILS, mail.id, {
        status: 'sent',
        attempts,
        sentAt: at,
        leaseUntil: null,
        lastError: null,
        sealedBody: null,
        updatedAt: at,
      });
    } catch (error) {
      this.failedAttempts++;
      const failed = attempts >= this.config.attempts;
      const delay = Math.min(this.config.backoffMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
      const now = this.ctx.now();
      const reason = String((error as Error).message ?? error).slice(0, MAX_ERROR);
      this.logger.warn({ mailId: mail.id, attempts, failed, err: reason }, 'mail not sent');
      await this.ctx.store.update(OUTGOING_MAILS, mail.id, {
        status: failed ? 'failed' : 'pending',
        attempts,
        nextAttemptAt: new Date(now.getTime() + (failed ? 0 : delay)).toISOString(),
        leaseUntil: null,
        lastError: reason,
        updatedAt: now.toISOString(),
      });
    }
  }
}
