import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../health/metrics.js';
import type { OperatorMetrics } from '../health/operatorMetrics.js';
import { claimSpanEnd, requestTraceFields } from './requestTrace.js';
import { routeLabel } from './routeLabel.js';

/** One JSON log line per request, with the correlation id, and the endpoint statistics for health. */
export function requestLog(
  logger: Logger,
  metrics: Metrics,
  operator?: OperatorMetrics,
  routeOf?: (method: string, path: string) => string | undefined,
) {
  return function requestLog(req: Request, res: Response, next: NextFunction): void {
    const started = performance.now();
    // Taken now: mounted routers strip their prefix from req.path while they run. The query string is left out (it may hold tokens).
    const path = req.originalUrl.split('?')[0];
    // With traces on, the request's server span ends here too: one listener for both.
    const endSpan = claimSpanEnd(req);
    res.on('close', () => {
      endSpan?.();
      // A request whose answer was cut short (the client went away) is neither logged nor counted.
      if (!res.writableFinished) return;
      const ms = performance.now() - started;
      const endpoint = req.route ? `${req.method} ${req.baseUrl}${req.route.path}` : `${req.method} (unmatched)`;
      metrics.recordRequest(endpoint, res.statusCode, ms);
      if (operator)
        operator.request(req.method, routeLabel(req, res, routeOf) ?? '(unmatched)', res.statusCode, ms / 1000);
      if (logger.isLevelEnabled('info')) {
        logger.info(
          {
            ...requestTraceFields(req),
            correlationId: req.correlationId,
            // The socket's address, or X-Forwarded-For's as far as server.trustProxy believes it.
            clientAddress: req.ip,
            method: req.method,
            path,
            status: res.statusCode,
            ms: Math.round(ms * 10) / 10,
          },
          'request',
        );
      }
    });
    next();
  };
}
