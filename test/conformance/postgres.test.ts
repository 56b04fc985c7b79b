import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { PgStore } from '../../runtime/store/postgres/pgStore.js';
import { POSTGRES_URL, postgresReachable } from '../support/postgres.js';
import { storeConformance } from './storeConformance.js';

if (await postgresReachable()) {
  // Each run gets its own schema, so runs never see each other's tables.
  storeConformance('postgres', async () => PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` }));
} else {
  console.warn(`store conformance: postgres SKIPPED: no PostgreSQL server at ${POSTGRES_URL} (set POSTGRES_URL)`);
  describe.skip(`store conformance: postgres (no server at ${POSTGRES_URL})`, () => it('needs a PostgreSQL server', () => undefined));
}
