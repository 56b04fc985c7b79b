import { rmSync } from 'node:fs';
import type { EntityRules } from '../entities/entityRules.js';

/** Media assets keep their file in the upload folder; it goes with the record. */
export const mediaRules: EntityRules = {
  afterRemove(doc) {
    if (typeof doc.storagePath === 'string') rmSync(doc.storagePath, { force: true });
  },
};
