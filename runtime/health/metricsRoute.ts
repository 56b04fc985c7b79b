import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/apiError.js';
import type { OperatorMetrics } from './operatorMetrics.js';

export const METRICS_PATH = '/api/metrics';

export interface MetricsRouteOptions {
  operator: OperatorMetrics;
  /** METRICS_TOKEN / metrics.token: a scraper sends it as `Authorization: Bearer <token>`. */
  token?: string;
  /** The authenticate middleware; like health, this route runs before it and calls it itself. */
  authenticate(req: Request, res: Response, next: NextFunction): Promise<void>;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** GET /api/metrics: Prometheus text for the configured scrape token or an administrator; 401/403 otherwise. */
export function metricsRoute({ operator, token, authenticate }: MetricsRouteOptions) {
  const expected = token ? digest(`Bearer ${token}`) : undefined;
  return async function metrics(req: Request, res: Response, next: NextFunction): Promise<void> {
    const header = req.headers.authorization;
    // Digests of equal length, compared in constant time: the comparison tells nothing about the token.
    const byToken = expected !== undefined && typeof header === 'string' && timingSafeEqual(digest(header), expected);
    if (!byToken) {
      if (!header && !req.headers.cookie)
        return next(new ApiError('UNAUTHORIZED', 'Send the metrics token or an administrator credential'));
      try {
        await authenticate(req, res, () => undefined);
      } catch (error) {
        return next(error);
      }
      if (!req.caller?.isAdmin)
        return next(
          new ApiError(
            req.caller?.user ? 'FORBIDDEN' : 'UNAUTHORIZED',
            'Metrics are for the metrics token or administrators',
          ),
        );
    }
    const { contentType, text } = await operator.render();
    res.setHeader('Cache-Control', 'no-store');
    res.type(contentType).send(text);
  };
}
