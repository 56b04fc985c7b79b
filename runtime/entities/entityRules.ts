import { rmSync } from 'node:fs';
import type { Caller } from '../access/caller.js';
import { grantRules } from '../access/grantRules.js';
import { GRANTS } from '../access/grants.js';
import type { RuntimeContext } from '../context.js';
import { tenantMembershipRules } from '../access/tenantMembershipRules.js';
import { JOBS, jobRules } from '../jobs/jobRules.js';
import type { Doc } from '../store/types.js';

/** Rules some entities add to create and update, after validation and before the store; they may fill in values. */
export interface EntityRules {
  beforeCreate?(ctx: RuntimeContext, caller: Caller, values: Record<string, unknown>): Promise<void>;
  beforeUpdate?(ctx: RuntimeContext, caller: Caller, current: Doc, values: Record<string, unknown>): Promise<void>;
  /** After a delete committed, with the record as it was. */
  afterRemove?(doc: Doc): void;
}

/** Media assets keep their file in the upload folder; it goes with the record. */
const mediaRules: EntityRules = {
  afterRemove(doc) {
    if (typeof doc.storagePath === 'string') rmSync(doc.storagePath, { force: true });
  },
};

export const ENTITY_RULES: Record<string, EntityRules> = {
  [GRANTS]: grantRules,
  [JOBS]: jobRules,
  mediaAssets: mediaRules,
};

/** The rules of one entity: its own, or the membership rules of the configured tenancy entity. */
export function rulesFor(ctx: RuntimeContext, plural: string): EntityRules | undefined {
  return ENTITY_RULES[plural] ?? (plural === ctx.registry.model.tenancy?.entity ? tenantMembershipRules : undefined);
}
