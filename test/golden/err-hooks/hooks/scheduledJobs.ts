import { defineHooks } from '../generated/hooks.js';

// A hook module is for the entity it is named after.
export default defineHooks('orders', {});
