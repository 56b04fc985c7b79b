import { describe, expect, it } from 'vitest';
import { ALL_ROUTES } from './index.js';

type Schema = Record<string, unknown>;

/** Strings without a length bound and lists without a size bound, by their place in the schema. */
function unbounded(schema: Schema | undefined, at: string): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const found: string[] = [];
  const types = ([] as unknown[]).concat(schema.type ?? []);
  if (
    types.includes('string') &&
    schema.maxLength === undefined &&
    !schema.enum &&
    schema.contentMediaType === undefined
  )
    found.push(at);
  if (types.includes('array') && schema.maxItems === undefined) found.push(at);
  for (const [name, property] of Object.entries((schema.properties as Record<string, Schema>) ?? {}))
    found.push(...unbounded(property, `${at}.${name}`));
  if (schema.items) found.push(...unbounded(schema.items as Schema, `${at}[]`));
  for (const part of (schema.anyOf as Schema[]) ?? []) found.push(...unbounded(part, at));
  return found;
}

describe('the route declarations', () => {
  it('bound every string and list a caller sends', () => {
    const problems = ALL_ROUTES.flatMap((route) => [
      ...unbounded(route.body as Schema, `${route.operationId} body`),
      ...unbounded(route.query as Schema, `${route.operationId} query`),
    ]);
    expect(problems).toEqual([]);
  });

  it('name each operation, each method and path, and each client method once', () => {
    const ids = ALL_ROUTES.map((route) => route.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const routes = ALL_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(routes).size).toBe(routes.length);
    const methods = ALL_ROUTES.flatMap((route) => (route.client ? [`${route.client.group}.${route.client.name}`] : []));
    expect(new Set(methods).size).toBe(methods.length);
    expect(methods.length).toBeGreaterThan(20);
  });

  it('refuse fields a body does not name, and let a GET carry no body', () => {
    for (const route of ALL_ROUTES) {
      if (route.method === 'GET') expect(route.body, route.operationId).toBeUndefined();
      if (route.body && (route.bodyType ?? 'json') === 'json')
        expect((route.body as Schema).additionalProperties, route.operationId).toBe(false);
    }
  });

  it('keep summaries to one line; more goes in the description', () => {
    const long = ALL_ROUTES.filter((route) => route.summary.length > 120).map((route) => route.operationId);
    expect(long).toEqual([]);
  });

  it('say who may call every route', () => {
    for (const route of ALL_ROUTES) {
      expect(route.access, route.operationId).toBeDefined();
      // A route for administrators or permission holders answers 401 and 403.
      if (route.access === 'admin' || typeof route.access === 'object')
        expect(route.errors, route.operationId).toEqual(expect.arrayContaining(['UNAUTHORIZED', 'FORBIDDEN']));
    }
  });
});
