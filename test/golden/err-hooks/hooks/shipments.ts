import { defineHooks } from '../generated/hooks.js';

export default defineHooks('shipments', {});
