import { MongoStore } from '../../runtime/store/mongo/mongoStore.js';
import { fakeMongoClient } from '../support/fakeMongo.js';
import { storeConformance } from './storeConformance.js';

// The MongoDB adapter's own logic (documents, updates, indexes, conflicts, transactions,
// sorts, keyset paging) through the whole suite, on an in-memory stand-in for the driver.
// mongo.test.ts runs the same suite against a real server when MONGODB_URL is set.
storeConformance('mongodb adapter on an in-memory driver stand-in', async () =>
  MongoStore.withClient(fakeMongoClient(), 'conformance'),
);
