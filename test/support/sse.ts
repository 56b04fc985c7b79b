import { checkResponse } from './openApiCheck.js';

/** One Server-Sent Event as a browser's EventSource would dispatch it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Every event received so far (comments and id-only blocks are not events). */
  events: SseEvent[];
  /** The last id the stream named (as EventSource keeps it for Last-Event-ID). */
  lastId: string | undefined;
  /** Comment lines received (heartbeats). */
  comments: number;
  /** Resolves with the first event (from the start) that matches, or rejects after `timeoutMs`. */
  next(match: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens an SSE stream with fetch and parses it by the HTML standard's rules (the body of a
 * refusal is JSON and checked against the OpenAPI document like every other response).
 */
export async function openSse(
  url: string,
  options: { token?: string; headers?: Record<string, string> } = {},
): Promise<SseStream & { body?: any }> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(url, { headers, signal: controller.signal });
  const path = new URL(url).pathname + new URL(url).search;
  if (response.status !== 200) {
    const body = await response.json();
    const problems = checkResponse('GET', path, response.status, response.headers.get('content-type'), body);
    if (problems.length > 0) throw new Error(`response does not match the OpenAPI document: ${problems.join('; ')}`);
    const none = Promise.resolve();
    return {
      status: response.status,
      headers: response.headers,
      body,
      events: [],
      lastId: undefined,
      comments: 0,
      next: () => Promise.reject(new Error('no stream')),
      ended: none,
      close: () => undefined,
    };
  }
  const problems = checkResponse('GET', path, 200, response.headers.get('content-type'), undefined);
  if (problems.length > 0) throw new Error(`response does not match the OpenAPI document: ${problems.join('; ')}`);
  const waiting = new Set<() => void>();
  const stream: SseStream = {
    status: response.status,
    headers: response.headers,
    events: [],
    lastId: undefined,
    comments: 0,
    next(match, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = stream.events.find(match);
          if (!found) return false;
          clearTimeout(timer);
          waiting.delete(check as () => void);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiting.delete(check as () => void);
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(stream.events)}`));
        }, timeoutMs);
        if (!check()) waiting.add(check as () => void);
      });
    },
    ended: Promise.resolve(),
    close: () => controller.abort(),
  };
  stream.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    let data: string[] = [];
    let type = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.search(/\r\n|\r|\n/);
        while (end >= 0) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1);
          if (line === '') {
            if (data.length > 0) {
              const text = data.join('\n');
              let parsed: unknown = text;
              try {
                parsed = JSON.parse(text);
              } catch {
                // not JSON: kept as text
              }
              stream.events.push({ id: stream.lastId, event: type || 'message', data: parsed });
              for (const check of [...waiting]) check();
            }
            data = [];
            type = '';
          } else if (line.startsWith(':')) stream.comments++;
          else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            let value = colon < 0 ? '' : line.slice(colon + 1);
            if (value.startsWith(' ')) value = value.slice(1);
            if (field === 'data') data.push(value);
            else if (field === 'event') type = value;
            else if (field === 'id') stream.lastId = value;
          }
          end = buffer.search(/\r\n|\r|\n/);
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return stream;
}
