// The console talks only to the public API under /api/v1, with the session cookie the sign-in set.

export const API = '/api/v1';

/** An answer that was not a success, with what the envelope and headers told. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, string> = {},
    readonly correlationId: string | null = null,
  ) {
    super(message);
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();
/** Called when a signed-in request answers 401: the session ended (expired, revoked, signed out elsewhere). */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

let tenant: string | undefined;
/** The tenant picked in the switcher, sent as x-tenant-id on every request. */
export function setTenant(id: string | undefined): void {
  tenant = id;
}

export interface RequestOptions {
  body?: unknown;
  /** A multipart body (uploads) instead of JSON. */
  form?: FormData;
  /** The path is the server's own (`/api/health`), not under /api/v1. */
  absolute?: boolean;
  /** Answers with this status are the caller's to handle, not a session end (the sign-in form's 401). */
  quiet401?: boolean;
  signal?: AbortSignal;
}

/** One API call; the `data` of a success envelope, or the bare body of the auth routes. */
export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined && !options.form) headers['content-type'] = 'application/json';
  if (tenant) headers['x-tenant-id'] = tenant;
  let response: Response;
  try {
    response = await fetch(options.absolute ? path : `${API}${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiFailure(0, 'NETWORK', 'The server could not be reached. Check the connection and try again.');
  }
  const correlationId = response.headers.get('x-correlation-id');
  const text = await response.text();
  let body: { data?: unknown; error?: { code?: string; message?: string; details?: Record<string, string> } } | null =
    null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = body?.error ?? {};
    if (response.status === 401 && !options.quiet401) for (const listener of unauthorizedListeners) listener();
    throw new ApiFailure(
      response.status,
      String(error.code ?? `HTTP_${response.status}`),
      String(error.message ?? response.statusText ?? 'The request failed'),
      error.details ?? {},
      correlationId,
    );
  }
  return (body && typeof body === 'object' && 'data' in body ? body.data : body) as T;
}

/** A text answer (the Prometheus metrics); undefined when the server refuses it. */
export async function apiText(path: string): Promise<string | undefined> {
  try {
    const response = await fetch(path, { credentials: 'same-origin' });
    return response.ok ? await response.text() : undefined;
  } catch {
    return undefined;
  }
}

/** A query string from the set values of `params`; arrays repeat the name. */
export function query(params: Record<string, string | number | boolean | string[] | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const item of value) search.append(name, item);
    else search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
