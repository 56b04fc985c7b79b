// npm run docs:reference: writes the generated parts of the documentation's reference pages.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { referencePages } from './referencePages.js';

for (const [page, text] of referencePages()) {
  writeFileSync(join(packageRoot, page), text);
  console.log(`docs: wrote ${page}`);
}
