// Type tests of generated/hooks.ts: `tsc -p tsconfig.json` (the first step of npm test) fails
// when a line marked @ts-expect-error type-checks, i.e. when a mistake below is no longer caught.
import { defineHooks, reject } from '../../generated/hooks.js';

/** products declares the endpoint lowStock: its handler is required beside any hook. */
const endpoints = { lowStock: () => [] };

defineHooks('products', {
  endpoints,
  // @ts-expect-error a beforeCreate must return the create type (or nothing), not a number
  beforeCreate: () => 42,
});

defineHooks('products', {
  endpoints,
  // TypeScript does not check returned object literals for unknown fields; the runtime refuses them (500).
  // @ts-expect-error a required field of the create type is missing from the returned data
  beforeCreate: ({ data }) => ({ name: data.name, price: data.price }),
});

defineHooks('products', {
  endpoints,
  // @ts-expect-error stock is a number
  beforeUpdate: ({ data }) => ({ ...data, stock: 'many' }),
});

defineHooks('products', {
  endpoints,
  beforeUpdate({ existing }) {
    // @ts-expect-error existing is the record type: no such field
    existing.colour;
  },
});

defineHooks('products', {
  endpoints,
  // @ts-expect-error unknown hook name
  afterCreate: () => undefined,
});

// @ts-expect-error unknown entity
defineHooks('prodcts', {});

defineHooks('products', {
  endpoints,
  async afterCommit({ event, record, previous }) {
    // @ts-expect-error event names are a closed set
    if (event === 'inserted') return;
    const stock: number | null | undefined = record?.stock ?? previous?.stock;
    void stock;
  },
});

defineHooks('products', {
  endpoints,
  beforeDelete({ existing }) {
    // @ts-expect-error reject takes a client error code only
    reject('INTERNAL_ERROR', `no ${existing.id}`);
  },
});

// @ts-expect-error an entity without endpoints takes no endpoint handlers
defineHooks('articles', { endpoints: {} });

// @ts-expect-error orders declares endpoints approve and summary: their handlers are required
defineHooks('orders', { beforeCreate: ({ data }) => data });

defineHooks('orders', {
  endpoints: {
    // The body is typed from the entity file: note is a string.
    approve: async ({ record, body }) => ({ ...record, note: body.note.trim() }),
    // @ts-expect-error summary is a GET endpoint: it has no record
    summary: ({ record }) => record,
  },
});

defineHooks('orders', {
  endpoints: {
    // @ts-expect-error a record endpoint answers the entity's record
    approve: () => 'approved',
    summary: () => ({ placed: 1 }),
  },
});
