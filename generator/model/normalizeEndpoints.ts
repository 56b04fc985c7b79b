import { entityRouteTable } from '../../runtime/api/entityRoutes.js';
import type { EndpointMethod, EndpointModel, EntityModel, FieldModel } from '../../runtime/model/types.js';
import { ACTIONS } from '../../runtime/model/types.js';
import type { PathSegment } from '../schema/loadYaml.js';
import type { RawField } from './rawValue.js';

export interface RawEndpoint {
  method: EndpointMethod;
  path: string;
  permission?: string;
  description?: string;
  body?: Record<string, RawField>;
  response?: 'record' | 'json';
}

type Report = (path: PathSegment[], message: string, at?: 'key' | 'value') => void;

/** Names the typed client already uses on every entity, and names no object key should have. */
const TAKEN_NAMES = new Set([
  'list',
  'aggregate',
  'create',
  'bulk',
  'get',
  'update',
  'remove',
  'increment',
  'archive',
  'restore',
  'restoreFromTrash',
  'versions',
  'version',
  'compareVersions',
  'revert',
  'audit',
  'fieldChanges',
  'decideFieldChange',
  'metadata',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
]);
const BODY_METHODS: readonly EndpointMethod[] = ['POST', 'PUT', 'PATCH'];

/** Whether the typed client already uses `name` on every entity (or no object key should have it). */
export function isTakenClientName(name: string): boolean {
  return TAKEN_NAMES.has(name);
}

/**
 * The entity file's `endpoints`, checked: a body only where the method carries one, a known or
 * custom action, no name the typed client uses, no path a built-in route or another endpoint
 * already has. Their custom actions join the entity's permission grammar.
 */
export function normalizeEndpoints(
  raw: Record<string, RawEndpoint> | undefined,
  internal: boolean,
  bodyField: (name: string, raw: RawField, path: PathSegment[]) => FieldModel,
  report: Report,
): { endpoints?: EndpointModel[]; customActions?: string[] } {
  if (!raw || Object.keys(raw).length === 0) return {};
  if (internal) {
    report(['endpoints'], 'an internal entity has no routes, so no endpoints');
    return {};
  }
  const endpoints: EndpointModel[] = [];
  for (const [name, declared] of Object.entries(raw)) {
    const path: PathSegment[] = ['endpoints', name];
    if (TAKEN_NAMES.has(name))
      report(path, `"${name}" is taken by the typed client's own methods; choose another name`, 'key');
    const byId = declared.path.startsWith('/{id}/');
    const fallback = declared.method === 'GET' ? 'view' : byId ? 'edit' : 'create';
    // A malformed permission was reported by the shape check; the default stands in for it here.
    const action =
      declared.permission && /^[a-z][A-Za-z0-9]*$/.test(declared.permission) ? declared.permission : fallback;
    if (declared.body && !BODY_METHODS.includes(declared.method)) {
      report([...path, 'body'], `a ${declared.method} request carries no body; use POST, PUT or PATCH`);
    }
    const body = declared.body
      ? Object.entries(declared.body).map(([field, rawField]) => bodyField(field, rawField, [...path, 'body', field]))
      : undefined;
    endpoints.push({
      name,
      method: declared.method,
      path: declared.path,
      byId,
      action,
      ...(declared.description ? { description: declared.description } : {}),
      ...(body && BODY_METHODS.includes(declared.method) ? { body } : {}),
      response: declared.response ?? (byId ? 'record' : 'json'),
    });
  }
  const customActions = [
    ...new Set(endpoints.map((e) => e.action).filter((a) => !(ACTIONS as readonly string[]).includes(a))),
  ];
  return { endpoints, ...(customActions.length > 0 ? { customActions } : {}) };
}

/** The route path of an endpoint, as the route table writes paths (`/orders/:id/approve`). */
export function endpointRoutePath(plural: string, endpoint: EndpointModel): string {
  return `/${plural}${endpoint.path.replace('{id}', ':id')}`;
}

/** Endpoints whose method and path a built-in route or an earlier endpoint already has. */
export function checkEndpointPaths(entity: EntityModel, report: Report): void {
  const builtin = entityRouteTable({ ...entity, endpoints: undefined });
  const taken = new Map(builtin.map(([method, path, name]) => [`${method} ${path}`, `the built-in route ${name}`]));
  for (const endpoint of entity.endpoints ?? []) {
    const key = `${endpoint.method} ${endpointRoutePath(entity.plural, endpoint)}`;
    const holder = taken.get(key);
    if (holder)
      report(['endpoints', endpoint.name, 'path'], `${endpoint.method} ${endpoint.path} is taken by ${holder}`);
    else taken.set(key, `endpoint ${endpoint.name}`);
    if (
      !endpoint.byId &&
      endpoint.method === 'GET' &&
      ['metadata', 'bulk', 'aggregate'].includes(endpoint.path.slice(1))
    ) {
      report(['endpoints', endpoint.name, 'path'], `${endpoint.path} is taken by a built-in route`);
    }
  }
}
