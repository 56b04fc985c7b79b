/** Counts of the current and the previous fixed window of one key. */
export interface WindowCounts {
  previous: number;
  current: number;
}

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the current window ends. */
  resetSeconds: number;
  /** Whole seconds (>= 1) until a request would be allowed; only when refused. */
  retryAfterSeconds?: number;
}

/**
 * Sliding-window counter: the previous window's count weighted by the share of it that the
 * sliding window still covers, plus the current count. Assumes the previous window's requests
 * were spread evenly, so a burst at the very end of one window followed by one at the start of
 * the next can pass up to limit x (1 + share of the current window elapsed) within one window
 * length; it never refuses a caller who stayed under the limit in every window length.
 */
export function estimate(counts: WindowCounts, windowMs: number, now: number): number {
  const elapsed = (now % windowMs) / windowMs;
  return counts.previous * (1 - elapsed) + counts.current;
}

export function decide(
  counts: WindowCounts,
  limit: number,
  windowMs: number,
  now: number,
  admitted: boolean,
): Decision {
  const resetSeconds = Math.max(1, Math.ceil((windowMs - (now % windowMs)) / 1000));
  const used = estimate(counts, windowMs, now);
  if (admitted) return { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - used)), resetSeconds };
  return {
    allowed: false,
    limit,
    remaining: 0,
    resetSeconds,
    retryAfterSeconds: retryAfter(counts, limit, windowMs, now),
  };
}

/** Seconds until estimate + 1 <= limit, given no further requests. */
function retryAfter(counts: WindowCounts, limit: number, windowMs: number, now: number): number {
  const windowStart = now - (now % windowMs);
  for (let seconds = 1; seconds <= Math.ceil((2 * windowMs) / 1000); seconds++) {
    const later = now + seconds * 1000;
    const shifted = later - windowStart >= windowMs ? { previous: counts.current, current: 0 } : counts;
    const fresh = later - windowStart >= 2 * windowMs ? { previous: 0, current: 0 } : shifted;
    if (estimate(fresh, windowMs, later) + 1 <= limit) return seconds;
  }
  return Math.ceil((2 * windowMs) / 1000);
}
