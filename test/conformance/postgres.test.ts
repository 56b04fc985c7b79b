import { randomUUID } from 'node:crypto';
import { PgStore } from '../../runtime/store/postgres/pgStore.js';
import { storeConformance } from './storeConformance.js';

// Runs under `npm run test:postgres` (CI runs it); it needs a PostgreSQL server at POSTGRES_URL.
const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// Each run gets its own schema, so runs never see each other's tables.
storeConformance('postgres', async () => PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` }));
