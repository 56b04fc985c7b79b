import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPublicAddress, publicOnlyLookup } from './safeTarget.js';

/** How much of a receiver's answer is kept (in webhookDeliveries.responseBody). */
export const RESPONSE_PREFIX_BYTES = 1024;

export interface PostOutcome {
  /** The receiver answered 2xx. */
  ok: boolean;
  status?: number;
  /** The first RESPONSE_PREFIX_BYTES of the answer, as text. */
  body?: string;
  latencyMs: number;
  /** Why the attempt failed (network error, timeout, redirect, status). */
  error?: string;
}

/**
 * POSTs one delivery and settles within `timeoutMs`: redirects are not followed, at most a small
 * prefix of the answer is read, and without `allowPrivate` no non-public address is connected to
 * (literal addresses are checked here, names at lookup time).
 */
export function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<PostOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: Omit<PostOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, latencyMs: latency() });
    };
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return settle({ ok: false, error: 'the URL is not valid' });
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowPrivate && isIP(host) !== 0 && !isPublicAddress(host))
      return settle({ ok: false, error: `${host} is not a public address (webhooks.allowPrivateTargets is off)` });
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'entigen-webhooks',
        ...headers,
      },
      ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup() }),
    });
    const timer = setTimeout(() => {
      req.destroy();
      settle({ ok: false, error: `no answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    req.on('error', (error) => settle({ ok: false, error: error.message.slice(0, 500) }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_PREFIX_BYTES).toString('utf8');
        const ok = status >= 200 && status < 300;
        const error = ok
          ? undefined
          : status >= 300 && status < 400
            ? `answered ${status} (redirects are not followed)`
            : `answered ${status}`;
        settle({ ok, status, body: text, ...(error ? { error } : {}) });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_PREFIX_BYTES) chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_PREFIX_BYTES) finish();
      });
      res.on('end', finish);
      res.on('error', finish);
    });
    req.end(body);
  });
}
