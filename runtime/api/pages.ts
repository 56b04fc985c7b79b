import { MailTestResult, Session } from './auth.js';
import { route } from './route.js';
import { Dictionary, Enum, Page, Text, Type } from './schemas.js';

// The pages and files beside the API: the landing page, first-run setup, the API reference, the
// admin console and the documentation site.

const page = { tag: 'schema', access: 'public', response: Page, responseType: 'html' } as const;

const ServiceState = Type.Object({
  status: Enum(['up', 'down']),
  latencyMs: Type.Optional(Type.Number()),
  kind: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
});

export const Health = Type.Object({
  status: Enum(['ok', 'error']),
  timestamp: Type.String(),
  // An administrator's credential adds the statistics below.
  uptime: Type.Optional(Type.Integer({ description: 'Seconds since the process started (administrators)' })),
  requests: Type.Optional(
    Type.Object({
      total: Type.Integer(),
      errors: Type.Integer(),
      clientErrors: Type.Optional(Type.Integer()),
      errorRate: Type.Number(),
    }),
  ),
  memory: Type.Optional(
    Type.Object({
      rss: Type.Integer(),
      heapUsed: Type.Integer(),
      heapTotal: Type.Integer(),
      external: Type.Optional(Type.Integer()),
    }),
  ),
  slowestEndpoints: Type.Optional(
    Type.Array(
      Type.Object({ endpoint: Type.String(), count: Type.Integer(), avgMs: Type.Number(), maxMs: Type.Number() }),
    ),
  ),
  services: Type.Optional(Dictionary(ServiceState)),
  externalCalls: Type.Optional(Type.Unknown()),
  database: Type.Optional(ServiceState),
  cluster: Type.Optional(Type.Unknown({ description: 'The bus between instances: transport and state' })),
  events: Type.Optional(
    Type.Unknown({
      description: "The event log: size, open realtime streams, each webhook's oldest undelivered event",
    }),
  ),
});

export const health = route({
  method: 'GET',
  path: '/api/health',
  operationId: 'health',
  tag: 'health',
  access: 'optional',
  rateLimit: 'exempt',
  summary: 'Health: status and timestamp; statistics for an administrator',
  description:
    "Answers 200 while the database answers, else 503, to anyone, without a rate limit. An administrator also sees uptime, requests, memory, services, the database, and events (log size, open realtime streams, each webhook's oldest undelivered event).",
  response: Health,
  responseDescription: 'Healthy',
  errors: [],
  responses: {
    '503': { description: 'The database is unreachable', content: { 'application/json': { schema: Health } } },
  },
});

export const metrics = route({
  method: 'GET',
  path: '/api/metrics',
  operationId: 'metrics',
  tag: 'health',
  access: 'optional',
  rateLimit: 'exempt',
  summary: 'Prometheus metrics (text format), for the metrics token or an administrator',
  description:
    'Requests, latency, store calls, rate-limit refusals, idempotency replays, job runs and the process, in the Prometheus text format. Send the metrics token as a Bearer credential, or call as an administrator.',
  response: Type.String(),
  responseType: 'text',
  errors: ['UNAUTHORIZED', 'FORBIDDEN'],
});

export const home = route({
  ...page,
  method: 'GET',
  path: '/',
  operationId: 'home_page',
  tag: 'auth',
  summary: 'The page a finished setup lands on: links to the API reference, the OpenAPI document and health',
  errors: [],
});

export const setupPage = route({
  ...page,
  method: 'GET',
  path: '/setup',
  operationId: 'setup_page',
  tag: 'auth',
  summary: 'First-run page that creates the administrator (404 once one exists)',
  errors: ['NOT_FOUND'],
});

// The setup forms are read by their handler, which shows a refusal on the form page again.
const SETUP_FIELDS = { name: Type.Optional(Text(200)), email: Text(320), tenantName: Type.Optional(Text(200)) };

export const setupSubmit = route({
  method: 'POST',
  path: '/setup',
  operationId: 'setup_submit',
  tag: 'auth',
  access: 'public',
  idempotent: false,
  summary: 'Create the first administrator (form or JSON); 303 to / for a form',
  body: Type.Object({ ...SETUP_FIELDS, password: Text(1024) }),
  bodyType: 'form',
  status: 201,
  response: Session,
  errors: ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND', 'CONFLICT'],
  responses: { '303': { description: 'A submitted form: signed in, redirected to /' } },
});

export const setupTestMail = route({
  method: 'POST',
  path: '/setup/test-mail',
  operationId: 'setup_testMail',
  tag: 'auth',
  access: 'public',
  idempotent: false,
  summary: 'Before setup: send a test mail to the address of the setup form',
  description: "Reports the mail server's answer: the form page again, or JSON. 404 once an administrator exists.",
  body: Type.Object(SETUP_FIELDS),
  bodyType: 'form',
  response: MailTestResult,
  errors: ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND'],
});

export const openApiDocument = route({
  method: 'GET',
  path: '/api/docs/openapi.json',
  operationId: 'docs_openapi',
  tag: 'schema',
  access: 'public',
  summary: 'This document',
  response: Type.Object({}, { additionalProperties: true }),
  errors: [],
});

export const referenceAsset = route({
  ...page,
  method: 'GET',
  path: '/api/docs/assets/{file}',
  operationId: 'docs_asset',
  summary: 'Script and style of the reference page (served from swagger-ui-dist)',
  errors: ['NOT_FOUND'],
});

export const referencePage = route({
  ...page,
  method: 'GET',
  path: '/api/docs',
  operationId: 'docs_page',
  summary: 'API reference page',
  errors: [],
});

export const adminPage = route({
  ...page,
  method: 'GET',
  path: '/admin',
  operationId: 'admin_page',
  summary: 'The admin console (a single page that calls this API; docs/guide/admin-console.md)',
  errors: [],
});

export const adminAsset = route({
  ...page,
  method: 'GET',
  path: '/admin/assets/{file}',
  operationId: 'admin_asset',
  summary: "The admin console's script and stylesheet (content-hashed names, cached for a year)",
  errors: ['NOT_FOUND'],
});

export const adminRoute = route({
  ...page,
  method: 'GET',
  path: '/admin/{path}',
  operationId: 'admin_route',
  summary: 'Any other path under /admin (and deeper): the console page, which routes in the browser',
  errors: [],
});

export const docsSite = route({
  ...page,
  method: 'GET',
  path: '/docs',
  operationId: 'docs_site',
  summary: "entigen's documentation site, when it is built beside the package (npm run docs:build); 404 otherwise",
  errors: ['NOT_FOUND'],
});

export const docsSitePage = route({
  ...page,
  method: 'GET',
  path: '/docs/{path}',
  operationId: 'docs_site_page',
  summary: 'A page or asset of the documentation site (clean URLs: /docs/guide/deployment)',
  errors: ['NOT_FOUND'],
});
