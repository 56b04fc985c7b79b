import { describe, expect, it } from 'vitest';
import type { AppModel, EntityModel } from '../model/types.js';
import { builtinRoleId, builtinRoles } from './builtinRoles.js';

const entity = (plural: string, rolePermissions: Record<string, string[]>) =>
  ({ plural, rolePermissions, fields: [] }) as unknown as EntityModel;

describe('builtinRoles', () => {
  const model = {
    version: 1,
    app: { name: 'desk' },
    features: [],
    roles: [
      { key: 'AGENT', label: 'Support agent', description: 'Works tickets', permissions: ['tickets:view'] },
      { key: 'USER', label: 'Customer', permissions: ['tickets:create'] },
    ],
    entities: [
      entity('tickets', { AGENT: ['tickets:edit'], USER: ['tickets:view:own'] }),
      entity('comments', { LEAD: ['comments:view'], AGENT: ['tickets:view', 'comments:view'] }),
    ],
  } as AppModel;
  const roles = builtinRoles(model);

  it('gives a config role the union of the config’s and the entity files’ permissions', () => {
    expect(roles.get('AGENT')).toEqual({
      id: builtinRoleId('AGENT'),
      key: 'AGENT',
      label: 'Support agent',
      description: 'Works tickets',
      permissions: ['tickets:view', 'tickets:edit', 'comments:view'],
      isSystem: false,
      isBuiltin: false,
      origin: 'file',
    });
  });

  it('makes a role that only an entity file names exist, labelled by its key', () => {
    expect(roles.get('LEAD')).toMatchObject({ label: 'LEAD', permissions: ['comments:view'], origin: 'file' });
  });

  it('adds a config entry for a built-in key to the built-in', () => {
    expect(roles.get('USER')).toMatchObject({
      label: 'Customer',
      permissions: ['tickets:create', 'tickets:view:own'],
      isBuiltin: true,
      origin: 'builtin',
    });
    expect(roles.get('ADMIN')?.permissions).toEqual(['system:admin']);
  });
});
