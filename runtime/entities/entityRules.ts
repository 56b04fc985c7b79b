import type { Caller } from '../access/caller.js';
import { grantRules } from '../access/grantRules.js';
import { GRANTS } from '../access/grants.js';
import type { RuntimeContext } from '../context.js';
import { JOBS, jobRules } from '../jobs/jobRules.js';
import type { Doc } from '../store/types.js';

/** Rules some entities add to create and update, after validation and before the store; they may fill in values. */
export interface EntityRules {
  beforeCreate?(ctx: RuntimeContext, caller: Caller, values: Record<string, unknown>): Promise<void>;
  beforeUpdate?(ctx: RuntimeContext, caller: Caller, current: Doc, values: Record<string, unknown>): Promise<void>;
}

export const ENTITY_RULES: Record<string, EntityRules> = {
  [GRANTS]: grantRules,
  [JOBS]: jobRules,
};
