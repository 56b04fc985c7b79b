import type { NextFunction, Request, Response, Router } from 'express';
import { tokenHash } from '../auth/apiKeyToken.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import type { McpHub } from '../mcp/mcpHub.js';
import { MCP_SESSION_TTL_MS, openSession, sessionOpenedAt } from '../mcp/mcpSession.js';
import { REVOKED_SESSIONS } from '../model/collections.js';
import { packageVersion } from '../model/packageRoot.js';
import { UniqueConflict } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';
import { exactRouter } from './exactRouter.js';
import { MCP_PATH } from './rateLimit/rateLimit.js';
import './requestTypes.js';
import { requestContext, requestTraceFields } from './requestTrace.js';

export { MCP_PATH };

const SESSION_HEADER = 'mcp-session-id';
/** The MCP SDK and the server made with it, loaded by the first request: a server with /mcp off never holds them. */
let sdk:
  | Promise<[typeof import('../mcp/mcpServer.js'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]>
  | undefined;
const loadSdk = () => {
  sdk ??= Promise.all([import('../mcp/mcpServer.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]);
  return sdk;
};

/**
 * A JSON-RPC error of the transport, as MCP clients expect it (the session's problems: a missing
 * id is 400, an unknown or ended one 404, after which a client initializes again).
 */
function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * Sets `WWW-Authenticate` on a 401 from /mcp, however it is answered (the authentication stage
 * answers an invalid credential before the route runs): the header MCP clients look for.
 */
export function mcpChallenge(realm: string) {
  const challenge = `Bearer realm="${realm.replace(/["\\]/g, '')}"`;
  return function mcpChallenge(req: Request, res: Response, next: NextFunction): void {
    if (req.path !== MCP_PATH) return next();
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, status: number, ...rest: unknown[]) {
      if (status === 401 && !this.hasHeader('www-authenticate')) this.setHeader('WWW-Authenticate', challenge);
      return (writeHead as (...args: unknown[]) => Response).call(this, status, ...rest);
    } as Response['writeHead'];
    next();
  };
}

/**
 * POST, GET and DELETE /mcp: MCP's Streamable HTTP transport, answered by the official SDK with a
 * server made for the request's caller (runtime/mcp/mcpServer.ts). Before it: the Origin checked
 * against the allowed ones (DNS rebinding), a signed-in caller required (401 with
 * WWW-Authenticate), API keys made with `mcp: false` refused, and the session id checked.
 * Answers are JSON; GET opens the stream for server-to-client messages.
 */
export function mcpRoutes(ctx: RuntimeContext, hub: McpHub): Router {
  const router = exactRouter();
  const secret = `mcp:${ctx.secrets.signing}`;
  const serve = async (req: Request, res: Response): Promise<void> => {
    if (!hub.allowsOrigin(req.headers.origin))
      throw new ApiError('FORBIDDEN', 'This Origin may not call the MCP server; see mcp.allowedOrigins');
    const caller = req.caller;
    if (!caller.user) throw new ApiError('UNAUTHORIZED', 'The MCP server needs a session token or an API key');
    if (caller.credential?.kind === 'apiKey' && caller.credential.mcp === false)
      throw new ApiError('FORBIDDEN', 'This API key was made with mcp: false and may not use the MCP server');

    const now = ctx.now().getTime();
    const given = req.headers[SESSION_HEADER];
    const initializing = req.method === 'POST' && isInitialize(req.body);
    let session: string | undefined;
    if (initializing) {
      session = openSession(secret, caller, now);
      res.setHeader('Mcp-Session-Id', session);
    } else {
      if (typeof given !== 'string' || given === '')
        return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      const opened = sessionOpenedAt(secret, given, caller, now);
      if (opened === undefined || (await ended(given))) return rpcError(res, 404, -32001, 'Session not found');
      session = given;
      if (req.method === 'DELETE') {
        await end(given, caller.user.id, opened);
        await hub.endSession(given);
        res.status(200).end();
        return;
      }
    }

    const [{ mcpServer }, { StreamableHTTPServerTransport }] = await loadSdk();
    const traced = requestTraceFields(req);
    const server = mcpServer({
      ctx: requestContext(ctx, req),
      caller,
      config: hub.config,
      name: ctx.registry.model.app.name,
      version: packageVersion(),
      // Its error lines name the request's span, as the error handler's do.
      logger: traced ? ctx.logger.child(traced) : ctx.logger,
      correlationId: req.correlationId,
    });
    // Stateless on the SDK's side: the session is ours (signed), so any instance answers it.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const close = async () => {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    };
    const releaseStream = req.method === 'GET' ? hub.admitStream(sessionHolder(caller), session, { close }) : undefined;
    const release = hub.hold({ close });
    res.on('close', () => {
      release();
      releaseStream?.();
      void close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.method === 'POST' ? req.body : undefined);
  };

  /** Whether the session was ended by DELETE (on any instance). */
  async function ended(session: string): Promise<boolean> {
    const read = () =>
      ctx.store.find(REVOKED_SESSIONS, {
        where: { field: 'tokenHash', op: 'eq', value: tokenHash(session) },
        limit: 1,
        select: ['id'],
      });
    const found = ctx.store.remember
      ? await ctx.store.remember(`mcp-session\u0000${session}`, [REVOKED_SESSIONS], read)
      : await read();
    return found.length > 0;
  }

  async function end(session: string, userId: string, opened: number): Promise<void> {
    const at = ctx.now().toISOString();
    try {
      await ctx.store.insert(REVOKED_SESSIONS, {
        id: newId(),
        tokenHash: tokenHash(session),
        userId,
        expiresAt: new Date(opened + MCP_SESSION_TTL_MS).toISOString(),
        createdAt: at,
        updatedAt: at,
      });
    } catch (error) {
      // Ended at the same moment by another request: ended all the same.
      if (!(error instanceof UniqueConflict)) throw error;
    }
  }

  router.post(MCP_PATH, serve);
  router.get(MCP_PATH, serve);
  router.delete(MCP_PATH, serve);
  return router;
}

function sessionHolder(caller: Request['caller']): string {
  return caller.credential?.kind === 'apiKey' ? `key:${caller.credential.id}` : `user:${caller.user?.id}`;
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (message) =>
      message !== null && typeof message === 'object' && (message as { method?: unknown }).method === 'initialize',
  );
}
