import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityRouteTable } from '../../runtime/api/entityRoutes.js';
import { fixedRoutes } from '../../runtime/api/index.js';
import { repoRoot, runCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const documentText = readFileSync(join(repoRoot, 'generated', 'openapi.json'), 'utf8');
const document = JSON.parse(documentText) as {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, unknown>; operationId: string; parameters?: { $ref?: string; name?: string }[] }
    >
  >;
  components: Record<string, Record<string, unknown>> & { parameters: Record<string, { name: string }> };
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** The MCP server's one JSON-RPC endpoint: described by MCP's tools/list, not by this document (docs/departures.md). */
const MCP_PATH = '/mcp';

describe('generated/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(structuredClone(document) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('holds every route the server registers, and nothing the server does not have', async () => {
    const served = new Set(
      server.routes
        .list()
        .filter((r) => r.path !== MCP_PATH)
        .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`),
    );
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    expect([...served].filter((route) => !documented.has(route))).toEqual([]);
    expect([...documented].filter((route) => !served.has(route))).toEqual([]);
    // Spot checks of the kinds of routes: generic, history, auth, jobs, search, health, docs.
    for (const route of [
      'GET /api/v1/articles',
      'PATCH /api/v1/articles/{id}/increment',
      'GET /api/v1/articles/{id}/versions/compare',
      'GET /api/v1/projects/{id}/audit',
      'PUT /api/v1/articles/{id}/field-changes/{changeId}',
      'POST /api/v1/auth/login',
      'POST /api/v1/scheduledJobs/{id}/run',
      'GET /api/v1/search',
      'GET /api/health',
      'GET /api/docs/openapi.json',
    ]) {
      expect(served, route).toContain(route);
    }
  });

  it('serves every fixed route from its declaration, and documents nothing else by hand', () => {
    const model = server.ctx.registry.model;
    const openApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');
    const entityRoutes = new Set(
      model.entities.flatMap((entity) =>
        entityRouteTable(entity).map(([method, path]) => `${method} ${openApiPath(`/api/v1${path}`)}`),
      ),
    );
    const declared = fixedRoutes(model);
    const declaredRoutes = new Set(declared.map((route) => `${route.method} ${route.path}`));
    const served = new Set(
      server.routes
        .list()
        .filter((r) => r.path !== MCP_PATH)
        .map((r) => `${r.method} ${openApiPath(r.path)}`),
    );
    const fixedServed = [...served].filter((route) => !entityRoutes.has(route));
    expect(fixedServed.filter((route) => !declaredRoutes.has(route))).toEqual([]);
    expect([...declaredRoutes].filter((route) => !served.has(route))).toEqual([]);
    // Every operation of the document is an entity's or a declaration's.
    const entityIds = new Set(
      model.entities.flatMap((entity) =>
        entityRouteTable(entity).map(
          ([method, path]) => document.paths[openApiPath(`/api/v1${path}`)]?.[method.toLowerCase()]?.operationId,
        ),
      ),
    );
    const fixedIds = Object.values(document.paths)
      .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      .filter((id) => !entityIds.has(id));
    expect(fixedIds.sort()).toEqual(declared.map((route) => route.operationId).sort());
  });

  it('describes list parameters, filters, error codes and both credentials', async () => {
    const list = document.paths['/api/v1/articles'].get as unknown as {
      parameters: { $ref?: string; name?: string }[];
      responses: Record<string, { $ref?: string }>;
    };
    // Shared parameters and the entity's filters are components (the aggregation refers to the same ones).
    const names = (parameters: { $ref?: string; name?: string }[]) =>
      parameters.map((p) => (p.$ref ? document.components.parameters[p.$ref.split('/').pop()!].name : p.name));
    expect(names(list.parameters)).toEqual(
      expect.arrayContaining(['q', 'limit', 'cursor', 'sort', 'populate', 'kind', 'tags', 'kind[in]', 'tags[nin]']),
    );
    expect(names(document.paths['/api/v1/articles/aggregate'].get.parameters ?? [])).toEqual(
      expect.arrayContaining(['groupBy', 'timeZone', 'sum', 'avg', 'min', 'max', 'q', 'dateFrom', 'kind', 'kind[ne]']),
    );
    expect(Object.keys(list.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '429', '503']));
    expect(document.paths['/api/v1/articles'].post.responses['409']).toEqual({
      $ref: '#/components/responses/CONFLICT',
    });
    expect(document.components.securitySchemes).toMatchObject({
      cookieAuth: { type: 'apiKey', in: 'cookie', name: 'entigen_uid' },
      bearerAuth: { type: 'http', scheme: 'bearer' },
    });
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'Error',
        'Article',
        'ArticleCreate',
        'ArticleUpdate',
        'ArticleList',
        'Version',
        'AuditLog',
        'FieldChange',
      ]),
    );
  });

  it('is served at /api/docs/openapi.json, with a reference page whose assets come from this server', async () => {
    const served = await server.call('GET', '/api/docs/openapi.json');
    expect(served.status).toBe(200);
    expect(served.body).toEqual(document);
    const page = await fetch(`${server.url}/api/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<div id="reference">');
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source.startsWith('/api/docs/'), source).toBe(true);
      const asset = await fetch(`${server.url}${source}`);
      expect(asset.status, source).toBe(200);
    }
    expect((await fetch(`${server.url}/api/docs/assets/swagger-ui-bundle.js`)).headers.get('content-type')).toContain(
      'javascript',
    );
    expect((await fetch(`${server.url}/api/docs/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it('is what `entigen openapi` prints', async () => {
    const printed = await runCli(['openapi'], repoRoot);
    expect(printed.status).toBe(0);
    expect(printed.stdout).toBe(documentText);
  });
});
