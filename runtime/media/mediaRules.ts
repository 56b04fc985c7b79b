import { rmSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { EntityRules } from '../context/entityRules.js';

/**
 * Files of earlier versions were kept at an absolute path in the upload folder; such a file goes
 * with its record here. Files kept under the asset's id go through the event log (mediaFiles.ts).
 */
export const mediaRules: EntityRules = {
  afterRemove(doc) {
    if (typeof doc.storagePath === 'string' && isAbsolute(doc.storagePath)) rmSync(doc.storagePath, { force: true });
  },
};
