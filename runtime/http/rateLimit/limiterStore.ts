import type { Redis } from 'ioredis';
import type { WindowCounts } from './slidingWindow.js';

/** Where window counts live: this process, or Redis shared by every instance. */
export interface LimiterStore {
  /**
   * Atomically: read both windows of `key`; if estimate + 1 <= limit, count the request.
   * Returns the counts after the decision and whether the request was admitted.
   */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<{ admitted: boolean; counts: WindowCounts }>;
}

/** One instance: a Map of window counts, swept of windows older than the previous one. */
export function memoryLimiterStore(): LimiterStore {
  const windows = new Map<string, number>();
  let lastSweep = 0;
  return {
    async hit(key, limit, windowMs, now) {
      const index = Math.floor(now / windowMs);
      if (now - lastSweep > windowMs) {
        lastSweep = now;
        for (const name of windows.keys())
          if (Number(name.slice(name.lastIndexOf('|') + 1)) < index - 1) windows.delete(name);
      }
      const counts = {
        previous: windows.get(`${key}|${index - 1}`) ?? 0,
        current: windows.get(`${key}|${index}`) ?? 0,
      };
      const elapsed = (now % windowMs) / windowMs;
      const admitted = counts.previous * (1 - elapsed) + counts.current + 1 <= limit;
      if (admitted) {
        counts.current++;
        windows.set(`${key}|${index}`, counts.current);
      }
      return { admitted, counts };
    },
  };
}

// KEYS[1] current window, KEYS[2] previous; ARGV: limit, elapsed share (0..1), ttl ms.
const HIT_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
local admitted = 0
if previous * (1 - tonumber(ARGV[2])) + current + 1 <= tonumber(ARGV[1]) then
  current = redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  admitted = 1
end
return { admitted, previous, current }
`;

/** Several instances: the same decision made atomically in Redis by one Lua script. */
export function redisLimiterStore(redis: Redis, prefix = 'entigen:rl'): LimiterStore {
  return {
    async hit(key, limit, windowMs, now) {
      const index = Math.floor(now / windowMs);
      const elapsed = (now % windowMs) / windowMs;
      const [admitted, previous, current] = (await redis.eval(
        HIT_SCRIPT,
        2,
        `${prefix}:${key}:${index}`,
        `${prefix}:${key}:${index - 1}`,
        limit,
        elapsed,
        windowMs * 2,
      )) as [number, number, number];
      return { admitted: admitted === 1, counts: { previous, current } };
    },
  };
}
