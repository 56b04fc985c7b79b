import type { Request } from 'express';
import { API_KEY_PREFIX, tokenHash } from '../../auth/apiKeyToken.js';
import { verifySession } from '../../auth/sessionToken.js';
import { API_KEYS } from '../../model/collections.js';
import type { Store } from '../../store/types.js';
import { cookieValue } from '../authenticate.js';
import { addressKey } from './addressKey.js';
import { MCP_PATH, type Tier } from './rateLimit.js';

export interface IdentifyOptions {
  store: Store;
  secret: string;
  cookieName: string;
  sessionTtlMs: number;
  clock(): number;
  /** Paths that count in tier auth, per address (the routes declared so, and /api/v1/auth/*). */
  authTier?(path: string): boolean;
}

const KEY_CACHE_MS = 60_000;
const KEY_CACHE_SIZE = 10_000;

/**
 * The limiter checks the credential itself: a validly signed session counts per user, a known
 * API key per key (tier api); anything else per client address (tier public). /api/v1/auth/*
 * counts only in tier auth, per address.
 */
export function identifyCaller(options: IdentifyOptions) {
  const keys = new Map<string, { id: string | null; until: number }>();
  async function apiKeyId(token: string): Promise<string | null> {
    const hash = tokenHash(token);
    const now = options.clock();
    const cached = keys.get(hash);
    if (cached && cached.until > now) return cached.id;
    const [key] = await options.store.find(API_KEYS, {
      where: { field: 'tokenHash', op: 'eq', value: hash },
      limit: 1,
      select: ['id'],
    });
    if (keys.size >= KEY_CACHE_SIZE) keys.clear();
    keys.set(hash, { id: key?.id ?? null, until: now + KEY_CACHE_MS });
    return key?.id ?? null;
  }

  return async function identify(req: Request): Promise<{ tier: Tier; key: string }> {
    const address = `ip:${addressKey(req.ip ?? req.socket.remoteAddress ?? 'unknown')}`;
    if (req.path.startsWith('/api/v1/auth/') || options.authTier?.(req.path)) return { tier: 'auth', key: address };
    // The MCP server counts in a tier of its own: an agent's burst does not eat its person's API quota.
    const mcp = req.path === MCP_PATH;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? cookieValue(req.headers.cookie, options.cookieName);
    if (token?.startsWith(API_KEY_PREFIX)) {
      const id = await apiKeyId(token);
      if (id) return { tier: mcp ? 'mcp' : 'api', key: `key:${id}` };
    } else if (token) {
      const claims = verifySession(options.secret, token, options.clock(), options.sessionTtlMs);
      if (claims) return { tier: mcp ? 'mcp' : 'api', key: `user:${claims.userId}` };
    }
    return { tier: mcp ? 'mcp' : 'public', key: address };
  };
}
