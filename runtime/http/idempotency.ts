import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { FieldCipher } from '../crypto/fieldCipher.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { IDEMPOTENCY_RECORDS } from '../model/collections.js';
import { canonicalJson, IDEMPOTENCY_TTL_MS, MAX_IDEMPOTENCY_KEY_LENGTH } from '../model/idempotency.js';
import type { Doc, Store } from '../store/types.js';
import { claimIdempotencyKey } from '../write/idempotencyRecord.js';
import { canonicalPath } from './canonicalPath.js';
import { requestTraceFields } from './requestTrace.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotency-replayed';
export { canonicalJson, IDEMPOTENCY_TTL_MS, MAX_IDEMPOTENCY_KEY_LENGTH };

export interface IdempotencyOptions {
  store: Store;
  clock(): number;
  logger: Logger;
  /** Seals answers that hold a secret (session tokens, API key tokens) while they are kept. */
  cipher: FieldCipher;
  /** Told of every replay (the operator metrics count them). */
  onReplay?(): void;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A route whose answer holds a secret calls this before answering: the kept copy is then sealed. */
export function markSecretAnswer(res: Response): void {
  res.locals.secretAnswer = true;
}

/** Who is asking, once authenticated: the API key, else the user, else (signed out) the client address. */
export function callerScope(req: Request): string {
  const caller = req.caller;
  if (caller?.credential?.kind === 'apiKey') return `key:${caller.credential.id}`;
  if (caller?.user) return `user:${caller.user.id}`;
  return `ip:${req.ip}`;
}

/**
 * POST with Idempotency-Key, after authentication: the first request runs and its answer is
 * stored (in the store, for 24 hours) before it is sent; a repeat by the same caller (API key,
 * user, or signed-out address) gets that answer with idempotency-replayed: true. Another body
 * with the same key: 422. Same key still running: 409. 5xx answers are not kept; answers that
 * hold a secret are kept sealed (AES-256-GCM), never in clear.
 */
export function idempotency(options: IdempotencyOptions) {
  const { store } = options;

  async function existing(scopeKey: string): Promise<Doc | undefined> {
    const [record] = await store.find(IDEMPOTENCY_RECORDS, {
      where: { field: 'scopeKey', op: 'eq', value: scopeKey },
      limit: 1,
    });
    if (record && Date.parse(record.expiresAt as string) <= options.clock()) {
      await store.remove(IDEMPOTENCY_RECORDS, record.id);
      return undefined;
    }
    return record;
  }

  function answerFrom(record: Doc, requestHash: string, res: Response): void {
    if (record.requestHash !== requestHash)
      throw new ApiError('UNPROCESSABLE_ENTITY', 'This Idempotency-Key was used with a different request body');
    if (record.state !== 'completed')
      throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still being processed');
    const body =
      typeof record.sealedBody === 'string'
        ? JSON.parse(options.cipher.decrypt(record.sealedBody))
        : record.responseBody;
    options.onReplay?.();
    res.setHeader(REPLAYED_HEADER, 'true');
    res.status(record.responseStatus as number).json(body);
  }

  return async function idempotencyMiddleware(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (req.method !== 'POST') return next();
    const key = req.headers[IDEMPOTENCY_HEADER];
    if (key === undefined) return next();
    if (typeof key !== 'string' || key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw validationError({ 'idempotency-key': `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` });
    }
    const scopeKey = sha256(`${callerScope(req)}\n${req.method}\n${canonicalPath(req)}\n${key}`);
    const requestHash = sha256(canonicalJson(req.body ?? null));
    const found = await existing(scopeKey);
    if (found) return answerFrom(found, requestHash, res);
    const id = await claimIdempotencyKey(store, scopeKey, requestHash, options.clock());
    if (id === undefined) {
      const winner = await existing(scopeKey);
      if (!winner) throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still being processed');
      return answerFrom(winner, requestHash, res);
    }

    // The answer is kept before it is sent, so a repeat never finds it missing.
    const send = res.json.bind(res);
    let settled = false;
    res.json = (body: unknown) => {
      settled = true;
      const sealed = res.locals.secretAnswer === true;
      const answer = sealed
        ? { responseBody: null, sealedBody: options.cipher.encrypt(JSON.stringify(body ?? null)) }
        : { responseBody: body ?? null, sealedBody: null };
      const keep =
        res.statusCode < 500
          ? store.update(IDEMPOTENCY_RECORDS, id, {
              state: 'completed',
              responseStatus: res.statusCode,
              ...answer,
              updatedAt: new Date(options.clock()).toISOString(),
            })
          : store.remove(IDEMPOTENCY_RECORDS, id);
      keep.then(
        () => send(body),
        (error) => {
          options.logger.error(
            { ...requestTraceFields(req), err: error, correlationId: req.correlationId },
            'could not store the idempotent answer',
          );
          send(body);
        },
      );
      return res;
    };
    res.on('close', () => {
      // Answered some other way (a redirect, a dropped connection): nothing to replay.
      if (!settled) store.remove(IDEMPOTENCY_RECORDS, id).catch(() => undefined);
    });
    next();
  };
}

/** Removes expired records; the server runs it now and then. */
export async function sweepIdempotencyRecords(store: Store, now: number, batch = 500): Promise<number> {
  const expired = await store.find(IDEMPOTENCY_RECORDS, {
    where: { field: 'expiresAt', op: 'lte', value: new Date(now).toISOString() },
    limit: batch,
    select: ['id'],
  });
  for (const record of expired) await store.remove(IDEMPOTENCY_RECORDS, record.id);
  return expired.length;
}
