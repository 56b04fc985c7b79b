import { defineHooks } from '../generated/hooks.js';

export default defineHooks('things', {
  beforeCreate: ({ data }) => data,
});
