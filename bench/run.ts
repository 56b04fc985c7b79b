// `npm run bench`: every benchmark, one after another.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benches = ['buildLarge.js', 'pipeline.js', 'crud/run.js', 'realtime.js', 'importRecords.js', 'fieldAccess.js'];
for (const bench of benches) {
  const result = spawnSync(process.execPath, [fileURLToPath(new URL(`./${bench}`, import.meta.url))], {
    stdio: 'inherit',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
