import type { Registry } from '../context/defineRegistry.js';
import type { RepositoryScope } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import type { RepositoryWriter } from '../repository.js';
import type { Where } from '../store/types.js';

interface Referrer {
  entity: string;
  field: string;
  many: boolean;
  onDelete: 'restrict' | 'setNull' | 'cascade';
}

const referrers = new WeakMap<Registry, Map<string, Referrer[]>>();

/** Who references each entity, and what deleting one of its records does to them. */
function referrersOf(registry: Registry, plural: string): Referrer[] {
  let table = referrers.get(registry);
  if (!table) {
    table = new Map();
    for (const { model } of registry.entities.values())
      for (const field of model.fields) {
        if (!field.onDelete) continue;
        const many = field.type === 'array';
        const target = many ? field.items?.ref : field.ref;
        if (!target) continue;
        table.set(target, [
          ...(table.get(target) ?? []),
          { entity: model.plural, field: field.name, many, onDelete: field.onDelete },
        ]);
      }
    referrers.set(registry, table);
  }
  return table.get(plural) ?? [];
}

const referencing = (referrer: Referrer, id: string): Where =>
  referrer.many
    ? { field: referrer.field, op: 'contains', value: [id] }
    : { field: referrer.field, op: 'eq', value: id };

/**
 * What deleting record `id` of `plural` does to the records that reference it, in the delete's
 * transaction (`scope.ctx.store`): `restrict` refuses with 409 CONFLICT naming the entity and
 * how many reference it; `setNull` clears the field (or takes the id out of the array) through
 * `writer`, so history, hooks and the event log record it; `cascade` deletes them through
 * `writer`, which applies their own references' actions in turn (the build refuses cycles).
 */
export async function applyReferentialActions(
  scope: RepositoryScope,
  writer: RepositoryWriter,
  plural: string,
  id: string,
): Promise<void> {
  const { store, registry } = scope.ctx;
  const all = referrersOf(registry, plural);
  const name = registry.entities.get(plural)?.model.name ?? plural;
  for (const referrer of all.filter((r) => r.onDelete === 'restrict')) {
    const count = await store.count(referrer.entity, { where: referencing(referrer, id) });
    if (count > 0)
      throw new ApiError(
        'CONFLICT',
        `${count} ${referrer.entity} reference this ${name} through ${referrer.field}; change or delete them first`,
        { [referrer.entity]: `${count} records reference it through ${referrer.field}` },
      );
  }
  for (const referrer of all.filter((r) => r.onDelete !== 'restrict')) {
    for (;;) {
      const rows = await store.find(referrer.entity, { where: referencing(referrer, id), limit: 200 });
      for (const row of rows) {
        if (referrer.onDelete === 'cascade') await writer.remove(referrer.entity, row.id);
        else {
          const value = row[referrer.field];
          const cleared = referrer.many && Array.isArray(value) ? value.filter((v) => v !== id) : null;
          await writer.update(
            referrer.entity,
            row.id,
            { [referrer.field]: cleared },
            { updatedAt: scope.now.toISOString() },
          );
        }
      }
      if (rows.length < 200) break;
    }
  }
}
