import { defineHooks } from '../generated/hooks.js';

const HOURS = { high: 4, normal: 24, low: 72 } as const;

export default defineHooks('tickets', {
  // slaDueAt is readOnly: clients cannot send it, the server sets it here.
  beforeCreate({ data, now }) {
    const hours = HOURS[data.priority ?? 'normal'];
    return { ...data, slaDueAt: new Date(now.getTime() + hours * 3_600_000).toISOString() };
  },
});
