import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuntimeConfig, parseDuration } from './runtimeConfig.js';

describe('runtime config', () => {
  const empty = () => mkdtempSync(join(tmpdir(), 'entigen-config-'));

  it('has the spec defaults without a config file', () => {
    const config = loadRuntimeConfig(empty(), {});
    expect(config.rateLimit).toEqual({
      auth: { limit: 20, window: 60 },
      api: { limit: 100, window: 60 },
      public: { limit: 60, window: 60 },
    });
    expect(config.sessionTtlMs).toBe(7 * 86_400_000);
    expect(config.server.port).toBe(3000);
  });

  it('lets the environment override', () => {
    const config = loadRuntimeConfig(empty(), { RATE_LIMIT_API: '500/30', PORT: '8080', SESSION_TTL: '12h' });
    expect(config.rateLimit.api).toEqual({ limit: 500, window: 30 });
    expect(config.server.port).toBe(8080);
    expect(config.sessionTtlMs).toBe(12 * 3_600_000);
    expect(() => loadRuntimeConfig(empty(), { RATE_LIMIT_AUTH: 'lots' })).toThrow(
      /RATE_LIMIT_AUTH must look like 100\/60/,
    );
    expect(() => loadRuntimeConfig(empty(), { PORT: 'x' })).toThrow(/PORT/);
  });

  it('parses durations', () => {
    expect(parseDuration('45s')).toBe(45_000);
    expect(() => parseDuration('7 days')).toThrow(/invalid duration/);
  });
});
