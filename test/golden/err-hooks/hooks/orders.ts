import { defineHooks } from '../generated/hooks.js';

export default defineHooks('orders', {
  beforeCreate: ({ data }) => data,
  afterCreate: () => undefined,
  async beforeRemove() {},
});
