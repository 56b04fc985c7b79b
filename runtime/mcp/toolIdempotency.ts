import { createHash } from 'node:crypto';
import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import { IDEMPOTENCY_RECORDS } from '../model/collections.js';
import { canonicalJson } from '../model/idempotency.js';
import { claimIdempotencyKey } from '../write/idempotencyRecord.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * A write tool called with `idempotencyKey`, as POST with Idempotency-Key over HTTP: the first
 * call runs and its answer is kept (24 hours, in the same records); a repeat by the same caller
 * with the same arguments gets that answer without running again, other arguments 422, a repeat
 * while the first still runs 409. A call that fails keeps nothing, so it may be tried again.
 */
export async function onceFor(
  ctx: RuntimeContext,
  caller: Caller,
  tool: string,
  key: string | undefined,
  args: Record<string, unknown>,
  run: () => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  if (key === undefined) return run();
  const scope = caller.credential?.kind === 'apiKey' ? `key:${caller.credential.id}` : `user:${caller.user?.id}`;
  const scopeKey = sha256(`${scope}\nMCP\n${tool}\n${key}`);
  const requestHash = sha256(canonicalJson(args));
  const now = ctx.now().getTime();
  const id = await claimIdempotencyKey(ctx.store, scopeKey, requestHash, now);
  if (id === undefined) return kept(ctx, scopeKey, requestHash, now);
  try {
    const answer = await run();
    await ctx.store.update(IDEMPOTENCY_RECORDS, id, {
      state: 'completed',
      responseStatus: 200,
      responseBody: answer,
      updatedAt: ctx.now().toISOString(),
    });
    return answer;
  } catch (error) {
    await ctx.store.remove(IDEMPOTENCY_RECORDS, id).catch(() => undefined);
    throw error;
  }
}

/** The kept answer of an earlier call with the key (an expired one is removed, and the call refused to retry). */
async function kept(
  ctx: RuntimeContext,
  scopeKey: string,
  requestHash: string,
  now: number,
): Promise<Record<string, unknown>> {
  const [record] = await ctx.store.find(IDEMPOTENCY_RECORDS, {
    where: { field: 'scopeKey', op: 'eq', value: scopeKey },
    limit: 1,
  });
  if (!record) throw new ApiError('CONFLICT', 'A call with this idempotencyKey is still being processed');
  if (Date.parse(record.expiresAt as string) <= now) {
    await ctx.store.remove(IDEMPOTENCY_RECORDS, record.id);
    throw new ApiError('CONFLICT', 'This idempotencyKey expired just now; call again');
  }
  if (record.requestHash !== requestHash)
    throw new ApiError('UNPROCESSABLE_ENTITY', 'This idempotencyKey was used with other arguments');
  if (record.state !== 'completed')
    throw new ApiError('CONFLICT', 'A call with this idempotencyKey is still being processed');
  return record.responseBody as Record<string, unknown>;
}
