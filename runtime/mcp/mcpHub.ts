import type { McpConfig } from '../config/runtimeConfig.js';
import { ApiError } from '../errors/apiError.js';

/** Open GET streams (server-to-client messages) one instance keeps at most, and one credential. */
export const MAX_MCP_STREAMS = 1000;
export const MAX_MCP_STREAMS_PER_CALLER = 4;

/** Something that ends when the server stops: an MCP request's transport and server. */
interface Closable {
  close(): Promise<void> | void;
}

/**
 * The MCP server's state on this instance: its settings and what is open (every request's
 * transport while it answers; the GET streams, counted per credential), closed on the way down.
 */
export class McpHub {
  private readonly open = new Set<Closable>();
  private readonly streams = new Map<string, number>();
  /** The open GET streams of each session, ended with it. */
  private readonly sessions = new Map<string, Set<Closable>>();
  private stopped = false;

  constructor(
    readonly config: McpConfig,
    /** Origins allowed besides the configured ones: server.publicUrl's. */
    readonly origins: ReadonlySet<string>,
  ) {}

  start(): void {}

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.open].map((item) => Promise.resolve(item.close()).catch(() => undefined)));
    this.open.clear();
  }

  /** Keeps `item` until `done` is called or the server stops; refused while stopping. */
  hold(item: Closable): () => void {
    if (this.stopped) throw new ApiError('SERVICE_UNAVAILABLE', 'The server is shutting down');
    this.open.add(item);
    return () => this.open.delete(item);
  }

  /**
   * Admits one more GET stream for `holder` (429 beyond its share, 503 beyond the instance's),
   * closed by `endSession(session)`; answers its release.
   */
  admitStream(holder: string, session: string, stream: Closable): () => void {
    const held = this.streams.get(holder) ?? 0;
    if (held >= MAX_MCP_STREAMS_PER_CALLER)
      throw new ApiError('RATE_LIMITED', `At most ${MAX_MCP_STREAMS_PER_CALLER} open MCP streams per credential`);
    let total = 0;
    for (const count of this.streams.values()) total += count;
    if (total >= MAX_MCP_STREAMS) throw new ApiError('SERVICE_UNAVAILABLE', 'Too many open MCP streams; retry later');
    this.streams.set(holder, held + 1);
    const open = this.sessions.get(session) ?? new Set();
    open.add(stream);
    this.sessions.set(session, open);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      open.delete(stream);
      if (open.size === 0 && this.sessions.get(session) === open) this.sessions.delete(session);
      const left = (this.streams.get(holder) ?? 1) - 1;
      if (left > 0) this.streams.set(holder, left);
      else this.streams.delete(holder);
    };
  }

  /** Ends the streams this instance holds open for the session (DELETE /mcp). */
  async endSession(session: string): Promise<void> {
    const open = this.sessions.get(session);
    this.sessions.delete(session);
    await Promise.all([...(open ?? [])].map((stream) => Promise.resolve(stream.close()).catch(() => undefined)));
  }

  /** Whether a browser page of `origin` may call the server (absent: not a browser's cross-site call). */
  allowsOrigin(origin: string | undefined): boolean {
    if (origin === undefined) return true;
    return this.origins.has(origin) || this.config.allowedOrigins.includes(origin);
  }
}
