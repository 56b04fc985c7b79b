// Type tests of generated/hooks.ts: `tsc -p tsconfig.json` (the first step of npm test) fails
// when a line marked @ts-expect-error type-checks, i.e. when a mistake below is no longer caught.
import { defineHooks, reject } from '../../generated/hooks.js';

defineHooks('orders', {
  // @ts-expect-error a beforeCreate must return the create type (or nothing), not a number
  beforeCreate: () => 42,
});

defineHooks('orders', {
  // TypeScript does not check returned object literals for unknown fields; the runtime refuses them (500).
  // @ts-expect-error a required field of the create type is missing from the returned data
  beforeCreate: ({ data }) => ({ quantity: data.quantity }),
});

defineHooks('orders', {
  // @ts-expect-error quantity is a number
  beforeUpdate: ({ data }) => ({ ...data, quantity: 'many' }),
});

defineHooks('orders', {
  beforeUpdate({ existing }) {
    // @ts-expect-error existing is the record type: no such field
    existing.colour;
  },
});

defineHooks('orders', {
  // @ts-expect-error unknown hook name
  afterCreate: () => undefined,
});

// @ts-expect-error unknown entity
defineHooks('ordres', {});

defineHooks('orders', {
  async afterCommit({ event, record, previous }) {
    // @ts-expect-error event names are a closed set
    if (event === 'inserted') return;
    const quantity: number | undefined = record?.quantity ?? previous?.quantity;
    void quantity;
  },
});

defineHooks('orders', {
  beforeDelete({ existing }) {
    // @ts-expect-error reject takes a client error code only
    reject('INTERNAL_ERROR', `no ${existing.id}`);
  },
});
