import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { CorsConfig } from '../config/corsConfig.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'X-Correlation-Id',
  'X-Tenant-Id',
  'X-Change-Reason',
];
/** What a browser script may read of an answer besides the simple headers. */
export const EXPOSED_HEADERS = [
  'x-correlation-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'RateLimit',
  'RateLimit-Policy',
  'idempotency-replayed',
  'Allow',
  'Location',
];

function originMatcher(origins: string[]): (origin: string) => boolean {
  if (origins.includes('*')) return () => true;
  const exact = new Set(origins.filter((o) => !o.includes('*')).map((o) => o.toLowerCase()));
  const patterns = origins
    .filter((o) => o.includes('*'))
    .map(
      (o) => new RegExp(`^${o.toLowerCase().replace(/[.]/g, '\\.').replace('*\\.', '[a-z0-9-]+(\\.[a-z0-9-]+)*\\.')}$`),
    );
  return (origin) => exact.has(origin.toLowerCase()) || patterns.some((p) => p.test(origin.toLowerCase()));
}

/**
 * Cross-origin access for browser apps, through the `cors` package: nothing is allowed unless
 * origins are configured. Mounted before rate limiting and authentication, so a preflight
 * (OPTIONS) is answered at once, 204, and never counted or refused for a missing credential.
 */
export function corsPolicy(config: CorsConfig): RequestHandler | undefined {
  if (config.origins.length === 0) return undefined;
  const allowed = originMatcher(config.origins);
  const handler = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed(origin)),
    credentials: config.credentials,
    methods: METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: config.maxAge,
    optionsSuccessStatus: 204,
  });
  return function corsPolicy(req: Request, res: Response, next: NextFunction): void {
    // An allowed origin may read the answer; securityHeaders' same-origin CORP would otherwise stand in the way.
    const origin = req.headers.origin;
    if (typeof origin === 'string' && allowed(origin)) res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    handler(req, res, next);
  };
}
