import type { AppModel, EntityModel, FieldModel } from '../../runtime/model/types.js';

/** A change to the application's entities that existing data must be migrated for. */
export interface BreakingChange {
  entity: string;
  field?: string;
  /** Stable text a migration lists under `covers`, such as `articles.body: removed`. */
  key: string;
  description: string;
}

const typeOf = (field: FieldModel) => (field.type === 'array' ? `array of ${field.items?.type ?? 'any'}` : field.type);

/**
 * Compares the application's entities with the previous build. Additive changes (optional
 * fields, entities, labels, indexes) are fine; a removed entity or field (a rename is one),
 * a changed type, or a new required field without a default are breaking.
 */
export function breakingChanges(previous: AppModel, next: AppModel): BreakingChange[] {
  const changes: BreakingChange[] = [];
  const after = new Map(next.entities.map((e) => [e.plural, e]));
  for (const before of previous.entities.filter((e) => e.origin === 'app')) {
    const now = after.get(before.plural);
    if (!now) {
      changes.push({
        entity: before.plural,
        key: `${before.plural}: removed`,
        description: `entity ${before.plural} was removed`,
      });
      continue;
    }
    changes.push(...fieldChanges(before, now));
  }
  return changes;
}

function fieldChanges(before: EntityModel, now: EntityModel): BreakingChange[] {
  const changes: BreakingChange[] = [];
  const fields = new Map(now.fields.map((f) => [f.name, f]));
  const previous = new Set(before.fields.map((f) => f.name));
  for (const old of before.fields.filter((f) => !f.system)) {
    const field = fields.get(old.name);
    const at = `${now.plural}.${old.name}`;
    if (!field)
      changes.push({
        entity: now.plural,
        field: old.name,
        key: `${at}: removed`,
        description: `field ${old.name} (${typeOf(old)}) was removed or renamed`,
      });
    else if (typeOf(field) !== typeOf(old)) {
      changes.push({
        entity: now.plural,
        field: old.name,
        key: `${at}: type ${typeOf(old)} -> ${typeOf(field)}`,
        description: `field ${old.name} changed type from ${typeOf(old)} to ${typeOf(field)}`,
      });
    } else if (field.required && !old.required && field.default === undefined) {
      changes.push({
        entity: now.plural,
        field: old.name,
        key: `${at}: now required`,
        description: `field ${old.name} became required without a default`,
      });
    }
  }
  for (const field of now.fields.filter(
    (f) => !f.system && !previous.has(f.name) && f.required && f.default === undefined,
  )) {
    changes.push({
      entity: now.plural,
      field: field.name,
      key: `${now.plural}.${field.name}: required field added`,
      description: `required field ${field.name} was added without a default`,
    });
  }
  return changes;
}
