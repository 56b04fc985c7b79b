// ---- The client core: the same in every project; the typed entity clients follow below.

export type ErrorCode =
  | 'VALIDATION_ERROR' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE' | 'UNPROCESSABLE_ENTITY' | 'RATE_LIMITED' | 'INTERNAL_ERROR' | 'SERVICE_UNAVAILABLE'
  /** Realtime only: the events after your last id are no longer kept; reload, then subscribe without it. */
  | 'EVENTS_EXPIRED';

/** An error answer of the API: its status, code, message and per-field details. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, string> | undefined,
    readonly correlationId: string | null,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

export interface ClientOptions {
  /** Where the server is, e.g. http://localhost:3000 */
  baseUrl: string;
  /** An API key (egk_...), sent as a Bearer credential. */
  apiKey?: string;
  /** A session token (from login or register), sent as a Bearer credential. */
  token?: string;
  /**
   * Keep the session cookie that login and register set and send it back (for Node and other
   * runtimes without a browser's cookie store). In a browser the cookie is sent anyway.
   */
  cookies?: boolean;
  /** x-tenant-id: the tenant to act in, for users who belong to several. */
  tenantId?: string;
  /** Another fetch (tests, retries, instrumentation). */
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

export interface RequestOptions {
  /** Idempotency-Key of a POST: a repeat within 24 hours answers the first response. */
  idempotencyKey?: string;
  /** Why the change was made; recorded in the change history (x-change-reason). */
  changeReason?: string;
  /** Where the application has localized fields: the locale plain values are written in and the answer is read in. */
  locale?: string;
  signal?: AbortSignal;
}

export interface Collation {
  locale: string;
  strength?: 1 | 2 | 3;
  numericOrdering?: boolean;
}

export interface ListParams<Field extends string = string> {
  q?: string;
  limit?: number;
  page?: number;
  skip?: number;
  offset?: number;
  cursor?: string;
  sort?: Field | `-${Field}` | { field: Field; direction?: 'asc' | 'desc'; collation?: Collation };
  sortBy?: Field;
  sortDir?: 'asc' | 'desc';
  select?: Field[];
  includeArchived?: boolean;
  /** Entities that keep a trash: `only` lists the trash, `include` adds it (needs the delete permission). */
  trash?: 'only' | 'include';
  populate?: string[] | { paths: string[]; depth?: number };
  dateFrom?: string;
  dateTo?: string;
  dateMonth?: string;
  dateField?: Field;
  /**
   * Where the application has localized fields: the locale they are read, filtered and sorted in
   * (through its fallbacks), or `*` for every locale as an object keyed by locale.
   */
  locale?: string;
}

/**
 * Comparison operators of a list filter, e.g. `{ price: { gt: 10, lte: 99 } }`,
 * `{ status: { in: ['open', 'held'] } }`, `{ title: { contains: 'lamp' } }`; each field takes
 * those of its type (its Filters type names them).
 */
export interface FilterOperators<V> {
  eq?: V;
  ne?: V;
  gt?: V;
  gte?: V;
  lt?: V;
  lte?: V;
  in?: V[];
  nin?: V[];
  exists?: boolean;
  contains?: string;
  startsWith?: string;
}

/** What an entity may group and aggregate by: filter fields, date fields, number fields. */
export interface AggregateFields {
  group: string;
  date: string;
  number: string;
}

export type DateBucket = 'day' | 'week' | 'month' | 'year';

/**
 * GET /{plural}/aggregate: `groupBy` up to 3 fields (a date field as `createdAt:month`), the
 * values to aggregate per group, and the list's filters, `q`, date range and `includeArchived`.
 */
export interface AggregateParams<A extends AggregateFields> {
  /** Where the application has localized fields: the locale they are grouped, measured and filtered in. */
  locale?: string;
  groupBy?: (A['group'] | A['date'] | `${A['date']}:${DateBucket}`)[];
  /** IANA time zone of the date buckets (default UTC). */
  timeZone?: string;
  sum?: A['number'][];
  avg?: A['number'][];
  min?: (A['number'] | A['date'])[];
  max?: (A['number'] | A['date'])[];
  /** `count`, a groupBy field, or `sum.total` etc.; `-` first for descending. */
  sort?: string[];
  /** Groups per answer, 1 to 1000 (default 100). */
  limit?: number;
  skip?: number;
  q?: string;
  includeArchived?: boolean;
  dateFrom?: string;
  dateTo?: string;
  dateMonth?: string;
  dateField?: A['date'];
}

export interface AggregateGroup<Record_, A extends AggregateFields> {
  /** Each groupBy field and its value (null: records without one); date buckets as their first day, YYYY-MM-DD. */
  key: { [K in A['group']]?: K extends keyof Record_ ? Record_[K] : never } & { [K in A['date']]?: string | null };
  count: number;
  /** The sum of no values is 0. */
  sum?: { [K in A['number']]?: number };
  avg?: { [K in A['number']]?: number | null };
  min?: { [K in A['number'] | A['date']]?: K extends A['date'] ? string | null : number | null };
  max?: { [K in A['number'] | A['date']]?: K extends A['date'] ? string | null : number | null };
}

export interface AggregateResult<Record_, A extends AggregateFields> {
  groups: AggregateGroup<Record_, A>[];
  totalGroups: number;
}

export interface ListResult<T> {
  items: T[];
  totalCount: number;
  totalPages: number;
  nextCursor?: string;
}

/** The older names of two shapes the history routes answer. */
export type AuditEntry = AuditLog;
export type TrackedChange = FieldChange;

/** Exactly one of two shapes: each one's fields the other lacks read as undefined (`answer.mfaRequired`). */
export type OneOf<A, B> =
  | (A & { [K in Exclude<keyof B, keyof A>]?: undefined })
  | (B & { [K in Exclude<keyof A, keyof B>]?: undefined });

type Query = Record<string, unknown>;

/** Query parameters in the server's forms: repeated for arrays, bracketed for objects. */
function queryString(params: Query | undefined): string {
  if (!params) return '';
  const search = new URLSearchParams();
  const add = (key: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) for (const item of value) add(key, item);
    else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) add(`${key}[${k}]`, v);
    else search.append(key, String(value));
  };
  for (const [key, value] of Object.entries(params)) {
    if (key === 'select' && Array.isArray(value)) add(key, value.join(','));
    else if (key === 'populate' && Array.isArray(value)) add(key, value.join(','));
    else add(key, value);
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function errorOf(response: Response, body: unknown, what: string): ApiRequestError {
  const error = (body as { error?: { code?: ErrorCode; message?: string; details?: Record<string, string> } } | undefined)?.error;
  return new ApiRequestError(
    response.status,
    error?.code ?? (response.status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR'),
    error?.message ?? `${what} answered ${response.status}`,
    error?.details,
    response.headers.get('x-correlation-id'),
  );
}

/** One change as a realtime subscriber receives it: `id` is the event's place in the log. */
export type RealtimeRecordEvent<Plural extends string, Record_> =
  | {
      id: string;
      type: `${Plural}.${'created' | 'updated' | 'restored' | 'incremented' | 'reverted' | 'untrashed'}`;
      data: Record_;
    }
  /** Deleted, or (with `reason: 'hidden'`) no longer visible to you. */
  | { id: string; type: `${Plural}.deleted`; data: { id: string; reason?: 'hidden' } }
  /** With includeArchived the record; otherwise only its id (it left your view). */
  | { id: string; type: `${Plural}.archived`; data: Record_ | { id: string } }
  /** Moved to the trash: it left your view. */
  | { id: string; type: `${Plural}.trashed`; data: { id: string } };

export interface SubscribeOptions<Field extends string = string> {
  /** Resume after this event (the id of the last event you handled). */
  lastEventId?: string;
  /** Keep archived records in view. */
  includeArchived?: boolean;
  /** Fields to receive besides id. */
  select?: Field[];
  /** Reconnect (resuming after the last event) when the connection drops; default true. */
  reconnect?: boolean;
  /** The stream ended for good: refused (401, 403, 429, 400), events expired (reload), or the credential ended. */
  onError?(error: ApiRequestError): void;
  signal?: AbortSignal;
}

/** An open subscription. */
export interface Subscription {
  /** The id of the last event received (pass it as lastEventId to resume later). */
  readonly lastEventId: string | undefined;
  /** Resolves when the subscription has ended (closed, or ended for good by the server). */
  readonly closed: Promise<void>;
  close(): void;
}

/**
 * Subscribes to GET /api/v1/realtime, parses the Server-Sent Events, and reconnects with
 * Last-Event-ID after a dropped connection (the server resends everything missed, in order).
 */
export function subscribeRealtime<Event>(
  transport: Transport,
  entities: readonly string[],
  onEvent: (event: Event) => void,
  options: SubscribeOptions = {},
): Subscription {
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort());
  let lastEventId = options.lastEventId;
  let retryMs = 2000;
  const query: Query = {
    entities: entities.join(','),
    ...(options.includeArchived ? { includeArchived: true } : {}),
    ...(options.select?.length ? { select: options.select.join(',') } : {}),
  };
  const fail = (error: ApiRequestError) => {
    controller.abort();
    options.onError?.(error);
  };
  const once = async (): Promise<void> => {
    const response = await transport.stream('/api/v1/realtime', query, lastEventId, controller.signal);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let data: string[] = [];
    let type = '';
    let id: string | undefined;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end = buffer.search(/\r\n|\r|\n/);
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1);
        end = buffer.search(/\r\n|\r|\n/);
        if (line === '') {
          if (id !== undefined) lastEventId = id;
          if (data.length > 0) {
            const parsed = JSON.parse(data.join('\n'));
            if (type === 'stream.error') {
              fail(new ApiRequestError(response.status, parsed.error?.code ?? 'INTERNAL_ERROR', parsed.error?.message ?? 'The stream ended', undefined, null));
              return;
            }
            onEvent({ id: lastEventId, type, data: parsed } as Event);
          }
          data = [];
          type = '';
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(text);
        else if (field === 'event') type = text;
        else if (field === 'id') id = text;
        else if (field === 'retry' && /^\d+$/.test(text)) retryMs = Number(text);
      }
    }
  };
  const closed = (async () => {
    while (!controller.signal.aborted) {
      try {
        await once();
      } catch (error) {
        if (controller.signal.aborted) break;
        if (error instanceof ApiRequestError) {
          fail(error);
          break;
        }
      }
      if (options.reconnect === false) break;
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  })();
  return {
    get lastEventId() {
      return lastEventId;
    },
    closed,
    close: () => controller.abort(),
  };
}

/** Sends requests; the typed clients are thin layers over it. */
export class Transport {
  private readonly fetch: typeof fetch;
  private credential: string | undefined;
  private cookie: string | undefined;

  constructor(private readonly options: ClientOptions) {
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.credential = options.apiKey ?? options.token;
  }

  /** Uses a session token (or API key) from now on; undefined signs out of this client. */
  setCredential(credential: string | undefined): void {
    this.credential = credential;
    if (credential === undefined) this.cookie = undefined;
  }

  /** After login or register: the kept cookie carries the session when `cookies` is on, else the token does. */
  useSession(token: string): void {
    if (!this.options.cookies) this.credential = token;
  }

  private headers(accept: string): Record<string, string> {
    const headers: Record<string, string> = { accept, ...this.options.headers };
    if (this.credential) headers.authorization = `Bearer ${this.credential}`;
    if (this.cookie) headers.cookie = this.cookie;
    if (this.options.tenantId) headers['x-tenant-id'] = this.options.tenantId;
    return headers;
  }

  async request<T>(method: string, path: string, init: { query?: Query; body?: unknown; options?: RequestOptions } = {}): Promise<T> {
    const headers = this.headers('application/json');
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.options?.idempotencyKey) headers['idempotency-key'] = init.options.idempotencyKey;
    if (init.options?.changeReason) headers['x-change-reason'] = init.options.changeReason;
    const query = init.options?.locale ? { ...init.query, locale: init.options.locale } : init.query;
    const response = await this.fetch(`${this.options.baseUrl.replace(/\/$/, '')}${path}${queryString(query)}`, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      credentials: 'include',
      signal: init.options?.signal,
    });
    if (this.options.cookies) this.keepCookie(response);
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!response.ok) throw errorOf(response, body, `${method} ${path}`);
    return body as T;
  }

  /** Opens an event stream (GET); throws ApiRequestError when the server refuses it. */
  async stream(path: string, query: Query, lastEventId: string | undefined, signal: AbortSignal): Promise<Response> {
    const headers = this.headers('text/event-stream');
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const response = await this.fetch(`${this.options.baseUrl.replace(/\/$/, '')}${path}${queryString(query)}`, {
      headers,
      credentials: 'include',
      signal,
    });
    if (!response.ok) {
      const text = await response.text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      throw errorOf(response, body, `GET ${path}`);
    }
    return response;
  }

  /** Enveloped answers: `{ data }` -> data. */
  async data<T>(method: string, path: string, init: { query?: Query; body?: unknown; options?: RequestOptions } = {}): Promise<T> {
    return (await this.request<{ data: T }>(method, path, init)).data;
  }

  private keepCookie(response: Response): void {
    const headers = response.headers as Headers & { getSetCookie?: () => string[] };
    const cookies = headers.getSetCookie?.() ?? [];
    for (const cookie of cookies) {
      const pair = cookie.split(';')[0];
      const expired = /max-age=0|expires=thu, 01 jan 1970/i.test(cookie);
      this.cookie = expired ? undefined : pair;
    }
  }
}

const segment = (value: string | number) => encodeURIComponent(String(value));

type BatchOperationBody = {
  op: 'create' | 'update' | 'increment' | 'archive' | 'restore' | 'delete' | 'endpoint';
  entity: string;
  id?: string;
  name?: string;
  body?: unknown;
  permanent?: boolean;
};

/** One operation of a batch, as the batch builder makes it; the batch answers `R` in its place. */
export class BatchStep<R> {
  /** Never set: carries the answer's type. */
  declare readonly answer?: R;

  constructor(
    readonly index: number,
    readonly operation: BatchOperationBody,
  ) {}

  /** `$<index>.<field>`: this operation's answered value, for a later operation of the same batch. */
  ref(field: R extends object ? Extract<keyof R, string> : never): string {
    return `$${this.index}.${field}`;
  }
}

type AddStep = <R>(operation: BatchOperationBody) => BatchStep<R>;

/** The operations a batch may do on one entity; the generated types pick those the entity has. */
export class BatchEntity<Record_, Create, Update, Numeric extends string, Endpoint extends string = never> {
  constructor(
    private readonly add: AddStep,
    private readonly plural: string,
  ) {}

  create(body: Create): BatchStep<Record_> {
    return this.add({ op: 'create', entity: this.plural, body });
  }

  update(id: string, body: Update): BatchStep<Record_> {
    return this.add({ op: 'update', entity: this.plural, id, body });
  }

  increment(id: string, by: Partial<Record<Numeric, number>>): BatchStep<Record_> {
    return this.add({ op: 'increment', entity: this.plural, id, body: by });
  }

  archive(id: string): BatchStep<Record_> {
    return this.add({ op: 'archive', entity: this.plural, id });
  }

  restore(id: string): BatchStep<Record_> {
    return this.add({ op: 'restore', entity: this.plural, id });
  }

  remove(id: string, options: { permanent?: boolean } = {}): BatchStep<{ id: string; deleted: true; trashed?: true }> {
    return this.add({ op: 'delete', entity: this.plural, id, ...(options.permanent ? { permanent: true } : {}) });
  }

  /** A custom endpoint: `id` for `/{id}/...` ones, the body it takes. */
  endpoint(name: Endpoint, id?: string, body?: unknown): BatchStep<unknown> {
    return this.add({
      op: 'endpoint',
      entity: this.plural,
      name,
      ...(id !== undefined ? { id } : {}),
      ...(body !== undefined ? { body } : {}),
    });
  }
}

/** What each step of a batch answers, in its place. */
export type BatchAnswers<T extends readonly BatchStep<unknown>[]> = {
  -readonly [K in keyof T]: T[K] extends BatchStep<infer R> ? R : never;
};

/**
 * POST /api/v1/batch: the steps `build` returns, in the order it made them (each `ref` names its
 * place), in one transaction; answers each step's `data`. A failure throws the failed step's
 * error (its index in `details.operation`) and nothing is stored.
 */
async function runBatch<B, T extends readonly BatchStep<unknown>[]>(
  transport: Transport,
  builder: (add: AddStep) => B,
  build: (b: B) => T,
  options?: RequestOptions,
): Promise<BatchAnswers<T>> {
  const made: BatchStep<unknown>[] = [];
  const add: AddStep = <R>(operation: BatchOperationBody) => {
    const step = new BatchStep<R>(made.length, operation);
    made.push(step as BatchStep<unknown>);
    return step;
  };
  const steps = build(builder(add));
  if (steps.length !== made.length || steps.some((step, i) => step !== made[i]))
    throw new Error('batch: return every operation you made, in the order you made them (a ref names its place)');
  const answer = await transport.data<{ results: { status: number; body: { data: unknown } }[] }>('POST', '/api/v1/batch', {
    body: { operations: made.map((step) => step.operation) },
    options,
  });
  return answer.results.map((result) => result.body.data) as BatchAnswers<T>;
}
