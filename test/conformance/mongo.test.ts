import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { MongoStore } from '../../runtime/store/mongo/mongoStore.js';
import { storeConformance } from './storeConformance.js';

// Runs when MONGODB_URL names a MongoDB replica set (transactions need one), e.g.
// MONGODB_URL='mongodb://127.0.0.1:27017/?replicaSet=rs0' npx vitest run test/conformance/mongo.test.ts
// Without a server, mongoTranslation.test.ts evaluates the same filter, search and sort cases on
// the adapter's stored documents.
const MONGODB_URL = process.env.MONGODB_URL;

if (MONGODB_URL) {
  // Each run gets its own database, so runs never see each other's collections.
  storeConformance('mongodb', async () =>
    MongoStore.open(MONGODB_URL, { database: `conformance_${randomUUID().replace(/-/g, '')}` }),
  );
} else {
  console.warn('store conformance: mongodb SKIPPED because MONGODB_URL is not set');
  describe.skip('store conformance: mongodb (SKIPPED: MONGODB_URL is not set)', () => {
    it('needs a MongoDB replica set at MONGODB_URL', () => undefined);
  });
}
