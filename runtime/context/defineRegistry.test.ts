import { describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { hookTable } from './defineRegistry.js';

const orderEndpoints = { approve: async () => undefined, summary: async () => ({}) };
const module = (plural: string, hooks: Record<string, unknown>) => ({ plural, hooks });

describe('the hook table the server loads', () => {
  it('takes defineHooks modules, also as the default export of a CommonJS module', () => {
    const table = hookTable(registry.entities, [
      module('orders', { endpoints: orderEndpoints }),
      { default: module('products', { beforeCreate: () => undefined, endpoints: { lowStock: async () => [] } }) },
    ]);
    expect([...table.keys()].sort()).toEqual(['orders', 'products']);
  });

  it('refuses unknown entities, unknown hooks, undeclared endpoints and declared endpoints without a handler', () => {
    expect(() => hookTable(registry.entities, [module('nope', {})])).toThrow('hooks for unknown entity "nope"');
    expect(() => hookTable(registry.entities, [module('users', {})])).toThrow('hooks for unknown entity "users"');
    expect(() => hookTable(registry.entities, [module('products', { afterCreate: () => undefined })])).toThrow(
      'unknown hook "afterCreate"',
    );
    expect(() =>
      hookTable(registry.entities, [module('orders', { endpoints: { ...orderEndpoints, ship: () => 1 } })]),
    ).toThrow('endpoint "ship" is not declared in the entity file');
    expect(() => hookTable(registry.entities, [module('products', { endpoints: { lowStock: () => [] } })])).toThrow(
      'orders declares endpoints without a handler: approve, summary',
    );
    expect(() => hookTable(registry.entities, [{ plural: 'orders' }])).toThrow('must export default defineHooks');
  });
});
