import { describe, expect, it } from 'vitest';
import { parsePermission } from './parsePermission.js';

describe('parsePermission', () => {
  it.each([
    ['articles:create', { entity: 'articles', action: 'create' }],
    ['articles:view:own', { entity: 'articles', action: 'view', scope: 'own' }],
    ['articles:edit:all', { entity: 'articles', action: 'edit', scope: 'all' }],
    [
      'articles:view:status:published',
      { entity: 'articles', action: 'view', condition: { field: 'status', value: 'published' } },
    ],
    [
      'articles:edit:status:draft:own',
      { entity: 'articles', action: 'edit', scope: 'own', condition: { field: 'status', value: 'draft' } },
    ],
    ['system:admin', { entity: 'system', action: 'admin' }],
    ['api:access', { entity: 'api', action: 'access' }],
  ])('reads %s', (text, permission) => {
    expect(parsePermission(text)).toEqual({ ok: true, permission });
  });

  it.each([
    ['articles:publish', 'unknown action "publish"'],
    ['articles:view:mine', 'unknown scope "mine"'],
    ['articles', 'must look like'],
    ['articles::own', 'has an empty part'],
    ['a:view:b:c:own:x', 'must look like'],
  ])('refuses %s', (text, reason) => {
    const result = parsePermission(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });
});
