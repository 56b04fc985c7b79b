import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';
import { repoRoot } from './cli.js';

// Checks real responses against generated/openapi.json: the operation that matches the method and
// path must document the status, and a JSON body must satisfy that response's schema.

const Ajv2020 = Ajv2020Module.default;
type Json = Record<string, any>;

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  /** Literal segments: a more literal template wins (`/articles/bulk` before `/articles/{id}`). */
  literals: number;
  operation: Json;
}

let compiled: { routes: Route[]; ajv: InstanceType<typeof Ajv2020>; document: Json } | undefined;
const validators = new Map<string, ValidateFunction>();

function load() {
  if (compiled) return compiled;
  const document = JSON.parse(readFileSync(join(repoRoot, 'generated', 'openapi.json'), 'utf8')) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      const segments = template.split('/');
      routes.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(
          `^${segments.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`,
        ),
        literals: segments.filter((s) => !/^\{.+\}$/.test(s)).length,
        operation: operation as Json,
      });
    }
  }
  routes.sort((a, b) => b.literals - a.literals);
  compiled = { routes, ajv, document };
  return compiled;
}

/** Rewrites `#/components/...` references to the registered document. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi${v}` : rebase(v),
    ]),
  );
}

const PIPELINE_STATUSES = new Set([400, 401, 403, 404, 405, 413, 429, 503]);

/** Problems of one response against the document; empty when it tells the truth. */
export function checkResponse(
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
): string[] {
  const { routes, ajv, document } = load();
  const path = new URL(url, 'http://x').pathname.replace(/\/$/, '') || '/';
  const route = routes.find((r) => r.method === method && r.pattern.test(path));
  if (!route) {
    // 404 and 405 for paths and methods the API does not have are the envelope by design, as are
    // answers that come before routing (body, credential, rate limit, an admin-only area's 403).
    return PIPELINE_STATUSES.has(status)
      ? checkEnvelope(ajv, body)
      : [`${method} ${path}: status ${status} for a path and method with no operation in the document`];
  }
  let response = route.operation.responses?.[String(status)] as Json | undefined;
  if (!response) return [`${method} ${route.template}: status ${status} is not documented`];
  if (response.$ref) response = document.components.responses[(response.$ref as string).split('/').pop()!] as Json;
  const schema = response.content?.['application/json']?.schema;
  if (!schema || !contentType?.includes('application/json')) return [];
  const key = `${method} ${route.template} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(rebase(schema) as object);
    validators.set(key, validate);
  }
  if (validate(body)) return [];
  return [`${key}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`];
}

function checkEnvelope(ajv: InstanceType<typeof Ajv2020>, body: unknown): string[] {
  const validate = ajv.getSchema('openapi#/components/schemas/Error')!;
  return validate(body) ? [] : [`error envelope: ${ajv.errorsText(validate.errors)}`];
}

/**
 * fetch that checks every answer against the document, for clients under test (the typed client):
 * an answer the document does not describe fails the call that received it.
 */
export const checkedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const type = response.headers.get('content-type');
  if (type?.includes('text/event-stream')) return response;
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = type?.includes('json') && text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const problems = checkResponse(init?.method ?? 'GET', url, response.status, type, body);
  if (problems.length > 0) throw new Error(`answer not as documented:\n${problems.join('\n')}`);
  return response;
};
