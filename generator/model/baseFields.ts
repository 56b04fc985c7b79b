import { USERS } from '../../runtime/model/collections.js';
import type { Base, FieldModel, ValueModel } from '../../runtime/model/types.js';
import { humanize } from './naming.js';

function field(name: string, value: ValueModel, options: Partial<FieldModel> = {}): FieldModel {
  return {
    name,
    label: humanize(name),
    ...value,
    required: false,
    unique: false,
    search: false,
    trackChanges: false,
    hidden: false,
    readOnly: false,
    system: false,
    filterable: false,
    ...options,
  };
}

const serverSet = { system: true, readOnly: true };

/** Fields a base adds before the entity's own, per the spec's *Base fields* table. */
export function baseFields(base: Base, tenancyEntity: string | undefined, trash = false): FieldModel[] {
  const fields = [field('id', { type: 'objectId' }, { ...serverSet, required: true, unique: true, label: 'ID' })];
  if (base !== 'system')
    fields.push(field('ownerId', { type: 'objectId', ref: USERS }, { ...serverSet, required: true, filterable: true }));
  if (tenancyEntity)
    fields.push(field('tenantId', { type: 'objectId', ref: tenancyEntity }, { ...serverSet, filterable: true }));
  fields.push(field('createdAt', { type: 'isoDate' }, { ...serverSet, required: true }));
  fields.push(field('updatedAt', { type: 'isoDate' }, { ...serverSet, required: true }));
  if (base !== 'system') fields.push(field('archivedAt', { type: 'isoDate' }, { ...serverSet }));
  if (trash) fields.push(field('trashedAt', { type: 'isoDate' }, { ...serverSet }));
  if (base === 'content') fields.push(...contentFields());
  return fields;
}

function contentFields(): FieldModel[] {
  return [
    field('title', { type: 'string' }, { required: true }),
    field('slug', { type: 'string' }),
    field('summary', { type: 'string' }),
    field('tags', { type: 'array', items: { type: 'string' } }, { default: [], filterable: true }),
    field(
      'status',
      { type: 'enum', values: ['draft', 'published', 'archived'].map((key) => ({ key, label: humanize(key) })) },
      { default: 'draft', filterable: true },
    ),
    field('publishedAt', { type: 'isoDate' }),
    field('featuredImage', { type: 'string' }),
  ];
}

/** Every name a base may add, whatever the entity's options: declared fields may not reuse them. */
export function reservedBaseNames(base: Base): Set<string> {
  return new Set(baseFields(base, 'tenant', true).map((f) => f.name));
}
