import { fieldView } from '../access/fieldAccess.js';
import { findVisible } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { Doc } from '../store/types.js';
import { type PopulateSpec, populateRecords } from './populate.js';
import { presentRecord } from './presentRecord.js';

export interface GetInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  caller: Caller;
  populate?: PopulateSpec;
}

/** GET /{plural}/{id}: the record if the caller may view it, else 404. */
export async function getOperation({ ctx, plural, id, caller, populate }: GetInput): Promise<Doc> {
  const { model } = entityOf(ctx, plural);
  const doc = presentRecord(model, await findVisible(ctx, model, id, caller), fieldView(model, caller));
  if (!populate) return doc;
  const [populated] = await populateRecords(ctx, model, [doc], populate, caller);
  return populated;
}
