import { parseDuration } from '../config/runtimeConfig.js';
import { AUDIT_LOGS, ENTITY_VERSIONS } from '../model/collections.js';
import type { EntityModel } from '../model/types.js';
import type { Store, Where } from '../store/types.js';

/** Retention (`history: { keep, maxAge }`): older versions and audit entries go; the latest always stays. */
export async function pruneHistory(tx: Store, entity: EntityModel, entityId: string, now: Date): Promise<void> {
  const collection =
    entity.versioning === 'full' ? ENTITY_VERSIONS : entity.versioning === 'simple' ? AUDIT_LOGS : undefined;
  if (!collection || !entity.history) return;
  const ofRecord: Where = {
    and: [
      { field: 'entity', op: 'eq', value: entity.plural },
      { field: 'entityId', op: 'eq', value: entityId },
    ],
  };
  // Versions are numbered in the order they were written; ids only roughly, across instances
  // (the same second on two servers orders by each process's random part).
  const newestFirst = [{ field: collection === ENTITY_VERSIONS ? 'version' : 'id', direction: 'desc' as const }];
  const doomed = new Set<string>();
  if (entity.history.keep) {
    for (const old of await tx.find(collection, {
      where: ofRecord,
      sort: newestFirst,
      skip: entity.history.keep,
      select: ['id'],
    }))
      doomed.add(old.id);
  }
  if (entity.history.maxAge) {
    const cutoff = new Date(now.getTime() - parseDuration(entity.history.maxAge)).toISOString();
    const old = await tx.find(collection, {
      where: { and: [ofRecord, { field: 'createdAt', op: 'lt', value: cutoff }] },
      sort: newestFirst,
      select: ['id'],
    });
    const [latest] = await tx.find(collection, { where: ofRecord, sort: newestFirst, limit: 1, select: ['id'] });
    for (const entry of old) if (entry.id !== latest?.id) doomed.add(entry.id);
  }
  for (const id of doomed) await tx.remove(collection, id);
}
