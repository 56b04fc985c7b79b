import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../../errors/apiError.js';
import { requestTraceFields } from '../requestTrace.js';
import { type LimiterStore, memoryLimiterStore } from './limiterStore.js';
import { decide } from './slidingWindow.js';

export type Tier = 'auth' | 'api' | 'public' | 'mcp';

/** Where the MCP server answers (its requests count in tier mcp). */
export const MCP_PATH = '/mcp';
export interface TierLimit {
  limit: number;
  /** Seconds. */
  window: number;
}

export interface RateLimitOptions {
  tiers: Record<Tier, TierLimit>;
  store: LimiterStore;
  /** Milliseconds since the epoch; injected so tests can move time. */
  clock(): number;
  /** The tier and the key a request counts against. */
  identify(req: Request): Promise<{ tier: Tier; key: string }>;
  logger: Logger;
  /** Paths never limited. */
  exempt?: readonly string[];
  /** Told of every refusal (the operator metrics count them). */
  onRefused?(tier: Tier): void;
  /** Counts while `store` cannot be reached (Redis down): this instance's own; default in memory. */
  fallback?: LimiterStore;
}

/** Sliding-window rate limits per tier, with x-ratelimit-* and the IETF draft-7 RateLimit headers. */
export function rateLimit(options: RateLimitOptions) {
  for (const [tier, { limit, window }] of Object.entries(options.tiers)) {
    if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(window) || window < 1) {
      throw new Error(`rate limit tier ${tier} needs integer limit >= 1 and window >= 1 (seconds)`);
    }
  }
  const exempt = new Set(options.exempt ?? []);
  const fallback = options.fallback ?? memoryLimiterStore();
  let warned = 0;
  return async function rateLimit(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (exempt.has(req.path)) return next();
    const { tier, key } = await options.identify(req);
    const { limit, window } = options.tiers[tier];
    const windowMs = window * 1000;
    const now = options.clock();
    let result: Awaited<ReturnType<LimiterStore['hit']>>;
    try {
      result = await options.store.hit(`${tier}:${key}`, limit, windowMs, now);
    } catch (error) {
      // The shared counter is unreachable: each instance counts for itself meanwhile, so a
      // password guesser still meets a limit (the limit per instance, not one for all).
      if (now - warned > windowMs) {
        warned = now;
        options.logger.warn(
          // Its message alone: an outage's stack says nothing about the outage.
          {
            ...requestTraceFields(req),
            error: (error as Error)?.message ?? String(error),
            correlationId: req.correlationId,
          },
          'rate limit store unavailable; counting in this instance until it answers',
        );
      }
      result = await fallback.hit(`${tier}:${key}`, limit, windowMs, now);
    }
    const decision = decide(result.counts, limit, windowMs, now, result.admitted);
    res.setHeader('x-ratelimit-limit', String(limit));
    res.setHeader('x-ratelimit-remaining', String(decision.remaining));
    res.setHeader('x-ratelimit-reset', String(decision.resetSeconds));
    res.setHeader('RateLimit-Policy', `${limit};w=${window}`);
    res.setHeader('RateLimit', `limit=${limit}, remaining=${decision.remaining}, reset=${decision.resetSeconds}`);
    if (!decision.allowed) {
      res.setHeader('retry-after', String(decision.retryAfterSeconds));
      options.onRefused?.(tier);
      return next(new ApiError('RATE_LIMITED', 'Too many requests'));
    }
    next();
  };
}
