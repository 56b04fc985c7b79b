import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../runtime/store/sqlite/sqliteStore.js';
import { storeConformance } from './storeConformance.js';

storeConformance('sqlite (file)', async () =>
  SqliteStore.open(join(mkdtempSync(join(tmpdir(), 'entigen-conf-')), 'c.db')),
);
storeConformance('sqlite (memory)', async () => SqliteStore.open(':memory:'));
