import { isIP } from 'node:net';
import { parseDuration } from './configValues.js';
import { type CorsConfig, checkCorsConfig } from './corsConfig.js';

// The server sections of entigen.config.yaml: listening, proxies, cookies, rate limits, CORS,
// the metrics token and the bound on staleness between instances.

export type TrustProxy = false | number | string[];
export type HttpAdapter = 'express' | 'node';

/**
 * When the session cookie carries `Secure`: `always`, `never`, or `auto` (the default): when the
 * request came over HTTPS (directly, or through a trusted proxy's X-Forwarded-Proto), when the
 * public URL is https, and on loopback hosts, where browsers keep Secure cookies over plain HTTP.
 */
export type SecureCookies = 'auto' | 'always' | 'never';

/** `RATE_LIMIT_API=100/60`: limit per window of seconds. */
export function tierFromEnv(value: string | undefined, name: string): { limit: number; window: number } | undefined {
  if (value === undefined || value === '') return undefined;
  const match = /^([1-9]\d*)\/([1-9]\d*)$/.exec(value.trim());
  if (!match) throw new Error(`${name} must look like 100/60 (requests per window of seconds), not "${value}"`);
  return { limit: Number(match[1]), window: Number(match[2]) };
}

/** CORS_ORIGINS (comma-separated) and CORS_CREDENTIALS (true/false) replace the config's `cors`. */
export function corsConfig(raw: Partial<CorsConfig> | undefined, env: NodeJS.ProcessEnv): CorsConfig {
  const origins =
    env.CORS_ORIGINS !== undefined
      ? env.CORS_ORIGINS.split(',')
          .map((o) => o.trim())
          .filter(Boolean)
      : (raw?.origins ?? []);
  if (env.CORS_CREDENTIALS !== undefined && !['true', 'false'].includes(env.CORS_CREDENTIALS))
    throw new Error(`CORS_CREDENTIALS must be true or false, not "${env.CORS_CREDENTIALS}"`);
  const credentials =
    env.CORS_CREDENTIALS !== undefined ? env.CORS_CREDENTIALS === 'true' : (raw?.credentials ?? false);
  const config = { origins, credentials, maxAge: raw?.maxAge ?? 600 };
  checkCorsConfig(config);
  return config;
}

/** A scrape token must be hard to guess: at least 16 characters. */
export function metricsToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined;
  if (token.length < 16) throw new Error('METRICS_TOKEN (metrics.token) must be at least 16 characters');
  return token;
}

/** Between 50 ms (pulses four times as often) and one minute. */
export function maxStaleness(text: string): number {
  const ms = parseDuration(text);
  if (ms < 50 || ms > 60_000)
    throw new Error(`CLUSTER_MAX_STALENESS (cluster.maxStaleness) must be from 50ms to 1m, not "${text}"`);
  return ms;
}

/**
 * TRUST_PROXY: `false`, a hop count (`1`: the one proxy in front), or comma-separated addresses,
 * CIDR ranges and the names loopback, linklocal, uniquelocal. `true` is refused: it would believe
 * any client's X-Forwarded-For, so anyone could pick the address rate limits and logs see.
 */
export function trustProxy(value: unknown): TrustProxy {
  if (value === undefined || value === null || value === false || value === '' || value === 'false') return false;
  const refuse = (): never => {
    throw new Error(
      `TRUST_PROXY (server.trustProxy) must be false, a hop count, or proxy addresses and CIDR ranges (or loopback, linklocal, uniquelocal), not ${JSON.stringify(value)}`,
    );
  };
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value.trim()))) {
    const hops = Number(value);
    if (!Number.isInteger(hops) || hops < 0 || hops > 100) refuse();
    return hops === 0 ? false : hops;
  }
  const entries = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : refuse();
  const list = entries.map((entry) => (typeof entry === 'string' ? entry.trim() : refuse())).filter(Boolean);
  if (list.length === 0 || !list.every(isProxyAddress)) refuse();
  return list;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

export function secureCookies(value: string): SecureCookies {
  if (value !== 'auto' && value !== 'always' && value !== 'never')
    throw new Error(`COOKIE_SECURE (server.cookies.secure) must be auto, always or never, not "${value}"`);
  return value;
}

export function httpAdapter(value: string): HttpAdapter {
  if (value !== 'express' && value !== 'node')
    throw new Error(`HTTP_ADAPTER (server.adapter) must be express or node, not "${value}"`);
  return value;
}

export function publicUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(url))
    throw new Error('PUBLIC_URL (server.publicUrl) must be an http:// or https:// URL without query or fragment');
  return url.replace(/\/+$/, '');
}
