import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../health/metrics.js';
import type { OperatorMetrics } from '../health/operatorMetrics.js';
import { requestTraceFields } from './requestTrace.js';
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
    res.on('finish', () => {
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
