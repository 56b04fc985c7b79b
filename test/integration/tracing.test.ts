import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, servableApp } from '../support/cli.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlpReceiver.js';
import { startSlapd } from '../support/slapd.js';
import { adminToken, type SpawnedServer, spawnServer } from '../support/spawnServer.js';
import { testDatabaseUrl } from '../support/testServer.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

/** OTLP's span kinds. */
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const ERROR = 2;

const running: SpawnedServer[] = [];
afterEach(({ task }) => {
  if (task.result?.state === 'fail')
    for (const [i, s] of running.entries()) console.error(`server ${i} at ${s.url}:\n${s.output().slice(-6000)}`);
});
afterAll(() => {
  for (const s of running.splice(0)) s.child.kill('SIGKILL');
});

/** The example app with a comments hook module: a before-hook, an afterCommit that reads its article. */
function tracedApp(): string {
  const app = servableApp();
  writeFileSync(
    join(app, 'hooks', 'comments.ts'),
    `import { defineHooks } from '../generated/hooks.js';

export default defineHooks('comments', {
  async beforeCreate({ data }) {
    return { ...data, body: data.body.trim() };
  },
  async afterCommit({ record, repositories }) {
    if (record) await repositories.articles.get(record.article as string);
  },
});
`,
  );
  return app;
}

async function serve(app: string, receiver: OtlpReceiver, env: Record<string, string> = {}): Promise<SpawnedServer> {
  const server = await spawnServer(
    {
      DATABASE_URL: testDatabaseUrl(mkdtempSync(join(tmpdir(), 'entigen-traces-'))),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      APP_ENCRYPTION_KEY: 'trace-test-encryption-key',
      RATE_LIMIT_API: '100000/60',
      RATE_LIMIT_AUTH: '100000/60',
      ...env,
    },
    app,
  );
  running.push(server);
  return server;
}

async function call(server: SpawnedServer, method: string, path: string, token?: string, body?: unknown, headers = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** The JSON lines a server wrote to its log. */
function logLines(server: SpawnedServer): Record<string, any>[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

/** The chain of names from a span up to its trace's root. */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const names: string[] = [];
  for (let at: ReceivedSpan | undefined = span; at; at = byId.get(at.parentSpanId)) names.push(at.name);
  return names;
}

describe('traces of a served app, exported over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let webhooks: WebhookReceiver;
  let app: string;
  let server: SpawnedServer;
  let admin: string;
  const store = process.env.TEST_STORE === 'postgres' ? 'postgresql' : 'sqlite';

  beforeAll(async () => {
    [receiver, webhooks] = await Promise.all([startOtlpReceiver(), startWebhookReceiver()]);
    app = tracedApp();
    const built = await runCli(['build'], app);
    expect(built.status, built.stderr).toBe(0);
    server = await serve(app, receiver, {
      OTEL_SERVICE_NAME: 'support-desk',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    });
    admin = await adminToken(server.url);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([receiver?.close(), webhooks?.close()]);
  });

  /** A webhook on created comments, posting to `url`. */
  async function hookComments(url: string) {
    const hook = await call(server, 'POST', '/api/v1/webhooks', admin, { url, events: ['comments.created'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    return hook;
  }

  it('follows a create from the server span into the access rule, the before-hook, the statements and the commit, then the afterCommit and the webhook', async () => {
    await hookComments(webhooks.url);
    const article = await call(server, 'POST', '/api/v1/articles', admin, { title: 'Traced', body: 'an article' });
    const secretText = 'a remark nobody should find in a span';
    const created = await call(server, 'POST', '/api/v1/comments', admin, {
      article: article.body.data.id,
      body: ` ${secretText} `,
    });
    expect(created.status).toBe(201);

    const root = await receiver.waitFor((s) => s.name === 'POST /api/v1/comments');
    expect(root.kind).toBe(SERVER);
    expect(root.parentSpanId).toBe('');
    expect(root.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/v1/comments',
      'http.response.status_code': 201,
      'url.path': '/api/v1/comments',
    });
    expect(typeof root.attributes['enduser.id']).toBe('string');
    expect(root.resource).toMatchObject({ 'service.name': 'support-desk', 'deployment.environment.name': 'test' });
    expect(root.encoding).toBe('protobuf');

    // The later work arrives in the same trace: the afterCommit delivery and the webhook's POST.
    const afterCommit = await receiver.waitFor((s) => s.name === 'afterCommit comments' && s.traceId === root.traceId);
    const webhook = await receiver.waitFor((s) => s.name === 'webhook comments.created' && s.traceId === root.traceId);
    const trace = receiver.trace(root.traceId);
    const named = (name: string) => trace.find((s) => s.name === name);

    const beforeHook = named('hook beforeCreate comments')!;
    expect(beforeHook.attributes).toMatchObject({ 'entigen.hook': 'beforeCreate', 'entigen.entity': 'comments' });
    expect(ancestry(trace, beforeHook).at(-1)).toBe('POST /api/v1/comments');
    const insert = named('INSERT comments')!;
    expect(insert.kind).toBe(CLIENT);
    expect(insert.attributes).toMatchObject({
      'db.system.name': store,
      'db.operation.name': 'INSERT',
      'db.collection.name': 'comments',
    });
    // Statements sit in their transaction, under the request.
    expect(ancestry(trace, insert)).toContain('transaction');
    expect(ancestry(trace, insert).at(-1)).toBe('POST /api/v1/comments');
    // The reference check reads the article under the caller's scope.
    expect(trace.some((s) => s.name === 'SELECT articles')).toBe(true);
    const commit = named('COMMIT')!;
    expect(commit.attributes).toMatchObject({ 'db.system.name': store, 'db.operation.name': 'COMMIT' });
    expect(commit.attributes['entigen.group_commit.transactions']).toBeGreaterThanOrEqual(1);
    expect(ancestry(trace, commit).at(-1)).toBe('POST /api/v1/comments');

    expect(afterCommit.kind).toBe(CONSUMER);
    expect(afterCommit.attributes).toMatchObject({ 'entigen.hook': 'afterCommit', 'entigen.event': 'created' });
    expect(ancestry(trace, afterCommit).at(-1)).toBe('POST /api/v1/comments');
    // The hook's own read is beneath it.
    expect(trace.some((s) => s.name === 'SELECT articles' && s.parentSpanId === afterCommit.spanId)).toBe(true);

    expect(webhook.kind).toBe(CLIENT);
    expect(webhook.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
    const [delivery] = await webhooks.accepted(1);
    expect(delivery.headers.traceparent).toBe(`00-${root.traceId}-${webhook.spanId}-01`);

    // No value, token or password in any span.
    const everything = JSON.stringify(trace);
    expect(everything).not.toContain(secretText);
    expect(everything).not.toContain(admin);
  });

  it("puts a shared commit in its first traced transaction's trace, linked to the others'", async () => {
    const article = await call(server, 'POST', '/api/v1/articles', admin, { title: 'Busy', body: 'an article' });
    // Concurrent creates share commits (one fsync, one WAL flush); each keeps its own trace.
    for (let round = 0; round < 5; round++) {
      const made = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          call(server, 'POST', '/api/v1/comments', admin, {
            article: article.body.data.id,
            body: `burst ${round} ${i}`,
          }),
        ),
      );
      expect(made.every((res) => res.status === 201)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (receiver.spans.some((s) => s.name === 'COMMIT' && s.links.length > 0)) break;
    }
    const shared = receiver.spans.find((s) => s.name === 'COMMIT' && s.links.length > 0)!;
    // Members outside any trace (a delivery's bookkeeping) are counted but have nothing to link to.
    expect(shared.attributes['entigen.group_commit.transactions']).toBeGreaterThanOrEqual(shared.links.length + 1);
    // Each link names a transaction span of another request's trace.
    for (const link of shared.links) {
      expect(link.traceId).not.toBe(shared.traceId);
      const linked = await receiver.waitFor((s) => s.spanId === link.spanId);
      expect(linked.name).toBe('transaction');
    }
  });

  it('shows a list under a rule through a reference as the rule resolved per entity', async () => {
    const role = await call(server, 'POST', '/api/v1/roles', admin, {
      key: 'READER',
      label: 'Reader',
      permissions: ['articles:view:author:{{user.id}}', 'comments:view:@article'],
    });
    expect(role.status).toBe(201);
    const password = 'a long reader password!';
    const user = await call(server, 'POST', '/api/v1/users', admin, {
      email: 'reader@example.test',
      displayName: 'Reader',
      password,
      roles: ['READER'],
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const login = await call(server, 'POST', '/api/v1/auth/login', undefined, {
      email: 'reader@example.test',
      password,
    });
    const list = await call(server, 'GET', '/api/v1/comments?limit=5', login.body.token);
    expect(list.status).toBe(200);

    const root = await receiver.waitFor((s) => s.name === 'GET /api/v1/comments');
    expect(root.attributes['enduser.id']).toBe(user.body.id);
    await receiver.waitFor((s) => s.name === 'SELECT comments' && s.traceId === root.traceId);
    const trace = receiver.trace(root.traceId);
    const comments = trace.find((s) => s.name === 'access view comments')!;
    expect(comments.kind).toBe(INTERNAL);
    // The comment's rule goes through its article: the article's own scope resolves beneath it.
    const articles = trace.find((s) => s.name === 'access view articles')!;
    expect(articles.parentSpanId).toBe(comments.spanId);
    expect(articles.attributes['entigen.access.depth']).toBe(1);
    expect(ancestry(trace, comments).at(-1)).toBe('GET /api/v1/comments');
  });

  it('continues the trace an incoming traceparent names', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const res = await call(server, 'GET', '/api/v1/articles?limit=1', admin, undefined, {
      traceparent: `00-${traceId}-${parent}-01`,
    });
    expect(res.status).toBe(200);
    const root = await receiver.waitFor((s) => s.name === 'GET /api/v1/articles' && s.traceId === traceId);
    expect(root.parentSpanId).toBe(parent);
  });

  it('makes each job run a trace of its own, a manual run linked to the request that started it', async () => {
    const job = await call(server, 'POST', '/api/v1/scheduledJobs', admin, {
      name: 'Traced heartbeat',
      handler: 'heartbeat',
      scheduleType: 'interval',
      schedules: ['1h'],
    });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const run = await call(server, 'POST', `/api/v1/scheduledJobs/${job.body.data.id}/run`, admin);
    expect(run.status).toBe(202);
    const request = await receiver.waitFor((s) => s.name === 'POST /api/v1/scheduledJobs/{id}/run');
    const span = await receiver.waitFor((s) => s.name === 'job Traced heartbeat');
    expect(span.parentSpanId).toBe('');
    expect(span.traceId).not.toBe(request.traceId);
    expect(span.links.map((l) => l.traceId)).toEqual([request.traceId]);
    expect(span.attributes).toMatchObject({ 'entigen.job.handler': 'heartbeat', 'entigen.job.trigger': 'manual' });
    // The run's own writes (its execution row) are in its trace.
    await receiver.waitFor((s) => s.traceId === span.traceId && s.name === 'UPDATE jobExecutions');
  });

  it("marks a hook's refusal on its span by message only, and the request's answer on the server span", async () => {
    const product = await call(server, 'POST', '/api/v1/products', admin, {
      name: 'Scarce',
      sku: 'SCARCE-1',
      price: 5,
      stock: 1,
    });
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const refused = await call(server, 'POST', '/api/v1/orders', admin, { product: product.body.data.id, quantity: 9 });
    expect(refused.status).toBe(409);
    const root = await receiver.waitFor((s) => s.name === 'POST /api/v1/orders');
    const hook = await receiver.waitFor((s) => s.name === 'hook beforeCreate orders' && s.traceId === root.traceId);
    expect(hook.status.code).toBe(ERROR);
    expect(hook.status.message).toBe('Only 1 of Scarce in stock');
    const exception = hook.events.find((e) => e.name === 'exception')!;
    expect(exception.attributes['exception.message']).toBe('Only 1 of Scarce in stock');
    expect(exception.attributes['exception.stacktrace']).toBeUndefined();
    // A client's error leaves the server span's status unset, as the HTTP conventions say.
    expect(root.attributes['http.response.status_code']).toBe(409);
    expect(root.status.code).toBe(0);
    expect(root.events.map((e) => e.name)).toContain('exception');
  });

  it("runs a custom endpoint's handler in a span of its own, beneath the request", async () => {
    const res = await call(server, 'GET', '/api/v1/products/low-stock', admin);
    expect(res.status).toBe(200);
    const root = await receiver.waitFor((s) => s.name === 'GET /api/v1/products/low-stock');
    const handler = await receiver.waitFor(
      (s) => s.name === 'endpoint products.lowStock' && s.traceId === root.traceId,
    );
    expect(handler.attributes).toMatchObject({ 'entigen.entity': 'products', 'entigen.endpoint': 'lowStock' });
    expect(ancestry(receiver.trace(root.traceId), handler).at(-1)).toBe('GET /api/v1/products/low-stock');
  });

  it('sends a queued mail in the trace of the request that queued it', async () => {
    const asked = await call(server, 'POST', '/api/v1/auth/forgot-password', undefined, {
      email: 'admin@example.test',
    });
    expect(asked.status).toBe(202);
    const root = await receiver.waitFor((s) => s.name === 'POST /api/v1/auth/forgot-password');
    const mail = await receiver.waitFor((s) => s.name === 'mail send' && s.traceId === root.traceId);
    expect(mail.kind).toBe(CLIENT);
    expect(mail.attributes['entigen.mail.attempt']).toBe(1);
    expect(JSON.stringify(mail)).not.toContain('admin@example.test');
  });

  it('shows an LDAP sign-in as a client span of the login, with no password anywhere', async () => {
    const slapd = await startSlapd();
    try {
      const ldap = await serve(app, receiver, { OTEL_SERVICE_NAME: 'ldap-desk', LDAP_ALLOWED_REQUEST_URLS: slapd.url });
      const login = await call(ldap, 'POST', '/api/v1/auth/login', undefined, {
        authType: 'ldap',
        email: 'alice',
        password: 'alice-secret',
        ldapConfig: { url: slapd.url, baseDN: slapd.baseDN, userFilter: '(uid={username})' },
      });
      expect(login.status).toBe(200);
      const root = await receiver.waitFor(
        (s) => s.resource['service.name'] === 'ldap-desk' && s.name === 'POST /api/v1/auth/login',
      );
      const bind = await receiver.waitFor((s) => s.name === 'ldap authenticate' && s.traceId === root.traceId);
      expect(bind.kind).toBe(CLIENT);
      expect(bind.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'entigen.ldap.base_dn': slapd.baseDN });
      expect(ancestry(receiver.trace(root.traceId), bind).at(-1)).toBe('POST /api/v1/auth/login');
      const everything = JSON.stringify(receiver.trace(root.traceId));
      expect(everything).not.toContain('alice-secret');
      expect(everything).not.toContain(login.body.token);
    } finally {
      slapd.stop();
    }
  }, 120_000);

  it("keeps a caller's decision not to sample for the request and the work its write causes", async () => {
    const own = await startWebhookReceiver();
    try {
      const hook = await hookComments(own.url);
      const article = await call(server, 'POST', '/api/v1/articles', admin, { title: 'Quiet', body: 'an article' });
      const traceId = '5bf92f3577b34da6a3ce929d0e0e4737';
      const created = await call(
        server,
        'POST',
        '/api/v1/comments',
        admin,
        { article: article.body.data.id, body: 'not sampled' },
        { traceparent: `00-${traceId}-00f067aa0ba902b8-00` },
      );
      expect(created.status).toBe(201);
      // The receiver gets the caller's trace, still flagged not sampled.
      const [delivery] = await own.accepted(1);
      expect(delivery.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
      // The request line names the trace too, as logs of an unsampled trace do.
      const line = logLines(server).find((l) => l.msg === 'request' && l.status === 201 && l.trace_id === traceId);
      expect(line?.span_id).toMatch(/^[0-9a-f]{16}$/);
      // Nothing of it is recorded: no span of the trace, and the delivery started no trace of its own.
      const sampled = await call(server, 'GET', '/api/v1/articles?limit=1', admin);
      expect(sampled.status).toBe(200);
      await receiver.waitFor((s) => s.name === 'GET /api/v1/articles' && s.traceId !== traceId);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.spans.filter((s) => s.traceId === traceId)).toEqual([]);
      expect(receiver.spans.filter((s) => s.attributes['entigen.webhook.id'] === hook.body.data.id)).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('writes trace_id and span_id on every request line', async () => {
    await call(server, 'GET', '/api/v1/faqs?limit=1', admin);
    const root = await receiver.waitFor((s) => s.name === 'GET /api/v1/faqs');
    const line = logLines(server).find((l) => l.msg === 'request' && l.path === '/api/v1/faqs');
    expect(line).toMatchObject({ trace_id: root.traceId, span_id: root.spanId });
  });

  it('sends http/json when asked, samples by the parent and a ratio, and loads nothing when disabled', async () => {
    const json = await serve(app, receiver, {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'json-desk',
    });
    await call(json, 'GET', '/api/v1/projects?limit=1', await adminToken(json.url));
    const span = await receiver.waitFor(
      (s) => s.resource['service.name'] === 'json-desk' && s.name === 'GET /api/v1/projects',
    );
    expect(span.encoding).toBe('json');
    expect(span.attributes['http.route']).toBe('/api/v1/projects');

    // A ratio of 0 keeps no new trace, but a caller's sampled trace is kept (parent-based).
    const sampled = await serve(app, receiver, {
      OTEL_SERVICE_NAME: 'ratio-desk',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    const token = await adminToken(sampled.url);
    await call(sampled, 'GET', '/api/v1/notes?limit=1', token);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await call(sampled, 'GET', '/api/v1/notes?limit=2', token, undefined, {
      traceparent: `00-${traceId}-b7ad6b7169203331-01`,
    });
    await receiver.waitFor((s) => s.traceId === traceId && s.name === 'GET /api/v1/notes');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const ratioSpans = receiver.spans.filter((s) => s.resource['service.name'] === 'ratio-desk');
    expect(new Set(ratioSpans.map((s) => s.traceId))).toEqual(new Set([traceId]));

    const off = await serve(app, receiver, { OTEL_SERVICE_NAME: 'off-desk', OTEL_SDK_DISABLED: 'true' });
    await call(off, 'GET', '/api/v1/notes?limit=1', await adminToken(off.url));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.spans.filter((s) => s.resource['service.name'] === 'off-desk')).toEqual([]);
    const line = logLines(off).find((l) => l.msg === 'request');
    expect(line).toBeDefined();
    expect(line?.trace_id).toBeUndefined();
    expect(receiver.refused).toEqual([]);
  });

  it('sends the spans it still holds as the server stops, with the exporter headers, and serves on while the collector is away', async () => {
    const holding = await serve(app, receiver, {
      OTEL_SERVICE_NAME: 'holding-desk',
      // Nothing is sent before the way down: the batch never fills, its delay never passes.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-desk-tenant=blue',
    });
    await call(holding, 'GET', '/api/v1/notes?limit=1', await adminToken(holding.url));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const held = () => receiver.spans.filter((s) => s.resource['service.name'] === 'holding-desk');
    expect(held()).toEqual([]);
    holding.child.kill('SIGTERM');
    expect(await holding.exited).toBe(0);
    const notes = held().find((s) => s.name === 'GET /api/v1/notes');
    expect(notes?.headers['x-desk-tenant']).toBe('blue');
    expect(held().some((s) => s.name === 'SELECT notes' && s.parentSpanId === notes?.spanId)).toBe(true);

    // A collector nobody answers at: every request is served, and the way down does not wait on it.
    const away = await serve(app, receiver, {
      OTEL_SERVICE_NAME: 'away-desk',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_TIMEOUT: '500',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    const token = await adminToken(away.url);
    for (let i = 0; i < 20; i++) expect((await call(away, 'GET', '/api/v1/notes?limit=1', token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await call(away, 'GET', '/api/v1/notes?limit=1', token)).status).toBe(200);
    away.child.kill('SIGTERM');
    expect(await away.exited).toBe(0);
    // The log tells it at once, then at most once a minute, not with every batch that failed; on
    // the way down, what failed since (the last export included) is summed up, not lost.
    const warnings = logLines(away).filter(
      (l) => l.msg === 'trace export failed: spans are not reaching the collector',
    );
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ level: 40, failedExports: 1 });
    expect(warnings[0].error).toMatch(/ECONNREFUSED|connect/);
    expect(warnings[1].level).toBe(40);
    expect(warnings[1].failedExports).toBeGreaterThanOrEqual(1);
    expect(warnings[1].error).toMatch(/ECONNREFUSED|connect/);
  });

  it('refuses to start on an exporter protocol it cannot speak, naming the variable', async () => {
    await expect(serve(app, receiver, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).rejects.toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL is "grpc".*http\/protobuf or http\/json/,
    );
  });
});
