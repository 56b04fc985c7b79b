import { IDEMPOTENCY_RECORDS } from '../model/collections.js';
import { IDEMPOTENCY_TTL_MS } from '../model/idempotency.js';
import { type Store, UniqueConflict } from '../store/types.js';
import { newId } from './prepareWrite.js';

/**
 * Claims an idempotency key for one request (HTTP's Idempotency-Key, an MCP write tool's
 * idempotencyKey): its in-flight record, kept for IDEMPOTENCY_TTL_MS, by the unique `scopeKey`.
 * The record's id, or undefined when another request holds the key already.
 */
export async function claimIdempotencyKey(
  store: Store,
  scopeKey: string,
  requestHash: string,
  now: number,
): Promise<string | undefined> {
  const id = newId();
  const stamp = new Date(now).toISOString();
  try {
    await store.insert(IDEMPOTENCY_RECORDS, {
      id,
      scopeKey,
      requestHash,
      state: 'inFlight',
      responseStatus: null,
      responseBody: null,
      expiresAt: new Date(now + IDEMPOTENCY_TTL_MS).toISOString(),
      createdAt: stamp,
      updatedAt: stamp,
    });
    return id;
  } catch (error) {
    if (error instanceof UniqueConflict) return undefined;
    throw error;
  }
}
