import { describe, expect, it } from 'vitest';
import { memoryLimiterStore } from './limiterStore.js';
import { decide } from './slidingWindow.js';

const WINDOW = 60_000;

async function burst(store: ReturnType<typeof memoryLimiterStore>, at: number, count: number) {
  const results = [];
  for (let i = 0; i < count; i++) {
    const { admitted, counts } = await store.hit('auth:ip', 20, WINDOW, at + i * 100);
    results.push(decide(counts, 20, WINDOW, at + i * 100, admitted));
  }
  return results;
}

describe('sliding-window counter', () => {
  it('refuses most of a second burst just after a window boundary, where a fixed window would pass it', async () => {
    const store = memoryLimiterStore();
    const minute = 29_000_000 * WINDOW;
    const late = await burst(store, minute + 55_000, 20);
    expect(late.every((d) => d.allowed)).toBe(true);
    expect(late.map((d) => d.remaining).slice(0, 3)).toEqual([19, 18, 17]);
    const early = await burst(store, minute + WINDOW + 2_000, 20);
    const refused = early.filter((d) => !d.allowed);
    expect(refused.length).toBeGreaterThanOrEqual(18);
    expect(refused.every((d) => d.retryAfterSeconds! > 0 && d.remaining === 0)).toBe(true);
  });

  it('admits again once the previous window has slid out', async () => {
    const store = memoryLimiterStore();
    const minute = 29_000_000 * WINDOW;
    await burst(store, minute, 20);
    expect((await burst(store, minute + 2 * WINDOW + 1_000, 1))[0].allowed).toBe(true);
  });

  it('gives a retry-after that really admits', async () => {
    const store = memoryLimiterStore();
    const minute = 29_000_000 * WINDOW;
    await burst(store, minute + 50_000, 20);
    const [refused] = await burst(store, minute + 59_000, 1);
    expect(refused.allowed).toBe(false);
    const [later] = await burst(store, minute + 59_000 + refused.retryAfterSeconds! * 1000, 1);
    expect(later.allowed).toBe(true);
  });
});
