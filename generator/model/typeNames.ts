import type { EntityModel } from '../../runtime/model/types.js';
import { pascalCase } from './naming.js';

/** The TypeScript names an entity contributes to generated/types.ts. */
export function typeNamesOf(entity: Pick<EntityModel, 'name' | 'fields'>): {
  record: string;
  create: string;
  update: string;
  enums: Map<string, string>;
} {
  const enums = new Map<string, string>();
  for (const field of entity.fields) {
    const values =
      field.type === 'enum'
        ? field.values
        : field.type === 'array' && field.items?.type === 'enum'
          ? field.items.values
          : undefined;
    if (values) enums.set(field.name, `${entity.name}${pascalCase(field.name)}`);
  }
  return { record: entity.name, create: `${entity.name}Create`, update: `${entity.name}Update`, enums };
}
