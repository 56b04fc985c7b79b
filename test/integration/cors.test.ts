import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

const APP = 'https://app.example.test';
let server: TestServer;
let plain: TestServer;

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      overrides: {
        rateLimit: { auth: { limit: 2, window: 60 }, api: { limit: 2, window: 60 }, public: { limit: 2, window: 60 } },
        cors: { origins: [APP, 'https://*.example.org'], credentials: true, maxAge: 600 },
      },
    },
  );
  plain = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await plain?.close();
});

const preflight = (target: TestServer, origin: string, path = '/api/v1/articles') =>
  fetch(`${target.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization,content-type,idempotency-key',
    },
  });

describe('CORS', () => {
  it('answers a preflight from an allowed origin at once, before rate limits and authentication', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await preflight(server, APP, '/api/v1/auth/me');
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP);
      expect(res.headers.get('access-control-allow-credentials')).toBe('true');
      expect(res.headers.get('access-control-allow-methods')).toContain('PATCH');
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('idempotency-key');
      expect(res.headers.get('access-control-max-age')).toBe('600');
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    // Five preflights counted nothing: the first real request still has its full quota.
    const real = await fetch(`${server.url}/api/v1/articles`, { headers: { origin: APP } });
    expect(real.status).toBe(200);
    expect(real.headers.get('x-ratelimit-remaining')).toBe('1');
  });

  it('lets an allowed origin read the answer and its correlation and rate-limit headers', async () => {
    const res = await fetch(`${server.url}/api/health`, { headers: { origin: 'https://shop.eu.example.org' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.eu.example.org');
    const exposed = res.headers.get('access-control-expose-headers')!.toLowerCase().split(',');
    expect(exposed).toEqual(
      expect.arrayContaining([
        'x-correlation-id',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'retry-after',
      ]),
    );
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
  });

  it('allows nothing else: other origins, look-alike hosts, and every origin by default', async () => {
    for (const origin of ['https://evil.test', 'https://example.org.evil.test', 'http://app.example.test', 'null']) {
      const res = await preflight(server, origin);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(
        (await fetch(`${server.url}/api/health`, { headers: { origin } })).headers.get('access-control-allow-origin'),
      ).toBeNull();
    }
    const res = await fetch(`${plain.url}/api/health`, { headers: { origin: APP } });
    expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    expect((await preflight(plain, APP)).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('takes CORS_ORIGINS and CORS_CREDENTIALS from the environment, and refuses "*" with credentials', async () => {
    const viaEnv = await startTestServer({ CORS_ORIGINS: 'https://env.example.test', CORS_CREDENTIALS: 'false' });
    try {
      const res = await preflight(viaEnv, 'https://env.example.test');
      expect(res.headers.get('access-control-allow-origin')).toBe('https://env.example.test');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    } finally {
      await viaEnv.close();
    }
    await expect(startTestServer({ CORS_ORIGINS: '*', CORS_CREDENTIALS: 'true' })).rejects.toThrow(
      /"\*" cannot be combined with credentials/,
    );
    await expect(startTestServer({ CORS_ORIGINS: 'https://app.example.test/path' })).rejects.toThrow(
      /is not an origin/,
    );
  });
});
