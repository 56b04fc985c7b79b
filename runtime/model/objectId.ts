import { randomBytes } from 'node:crypto';

/**
 * Record ids in MongoDB's ObjectId layout, 24 hex digits: seconds since 1970 (4 bytes), a random
 * value fixed for the process (5 bytes) and a counter that starts at a random value (3 bytes).
 * Ids a process makes grow as it makes them; ids of all processes grow with the second.
 * The `bson` package makes the same ids but sets aside 17 MB for its serializer when loaded.
 */
const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function newObjectId(now = Date.now()): string {
  counter = (counter + 1) & 0xffffff;
  // Past 2106 the seconds need a ninth digit; ObjectId wraps there too.
  const seconds = Math.floor(now / 1000) % 0x100000000;
  return seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0');
}
