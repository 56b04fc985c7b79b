import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { EntityModel, FieldModel, ValueModel } from '../model/types.js';
import { API_ACCESS, type CustomActions, parsePermission, SYSTEM_ADMIN } from './parsePermission.js';

/** The caller's values a permission's condition may name, and the user field each reads. */
export const CALLER_VALUES = { '{{user.id}}': 'id', '{{user.email}}': 'email' } as const;
export type CallerValue = (typeof CALLER_VALUES)[keyof typeof CALLER_VALUES];

/** `{{user.id}}` -> 'id'; undefined for a constant (or an unknown macro, which never passes the checks). */
export function callerValueOf(text: string): CallerValue | undefined {
  return Object.hasOwn(CALLER_VALUES, text) ? CALLER_VALUES[text as keyof typeof CALLER_VALUES] : undefined;
}

/** Types whose values a condition can compare (an array of them matches when it contains the value). */
const COMPARABLE = new Set(['string', 'int', 'float', 'boolean', 'enum', 'objectId', 'isoDate', 'url']);
const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

/**
 * Why `field:value` cannot condition a permission of this entity, or undefined when it can: the
 * field must exist and hold comparable values (or an array of them), and the value must fit
 * its type; `{{user.id}}` needs an objectId or string field, `{{user.email}}` a string one.
 */
export function conditionProblem(
  fields: readonly FieldModel[],
  condition: { field: string; value: string },
): string | undefined {
  const field = fields.find((f) => f.name === condition.field);
  if (!field) return `unknown field "${condition.field}"`;
  const value: ValueModel | undefined = field.type === 'array' ? field.items : field;
  if (field.hidden || !value || !COMPARABLE.has(value.type)) {
    return `field "${field.name}" (${describe(field)}) cannot condition a permission`;
  }
  // A localized field holds a value per locale: which one would the rule mean?
  if (field.localized)
    return `field "${field.name}" is localized (a value per locale) and cannot condition a permission`;
  const text = condition.value;
  if (text.includes('{{') || text.includes('}}')) {
    const macro = callerValueOf(text);
    if (!macro) return `unknown value "${text}"; caller values: ${Object.keys(CALLER_VALUES).join(', ')}`;
    const fits = macro === 'id' ? ['objectId', 'string'] : ['string'];
    if (!fits.includes(value.type)) return `${text} cannot match field "${field.name}" (${describe(field)})`;
    return undefined;
  }
  const wrong = constantProblem(value, text);
  return wrong ? `"${text}" is not a value of field "${field.name}": ${wrong}` : undefined;
}

function constantProblem(value: ValueModel, text: string): string | undefined {
  switch (value.type) {
    case 'int':
      return /^-?\d+$/.test(text) ? undefined : 'must be an integer';
    case 'float':
      return text.trim() !== '' && Number.isFinite(Number(text)) ? undefined : 'must be a number';
    case 'boolean':
      return text === 'true' || text === 'false' ? undefined : 'must be true or false';
    case 'enum': {
      const values = (value.values ?? []).map((v) => v.key);
      return values.includes(text) ? undefined : `must be one of ${values.join(', ')}`;
    }
    case 'objectId':
      return OBJECT_ID.test(text) ? undefined : 'must be an id (24 hexadecimal characters)';
    default:
      return undefined;
  }
}

function describe(field: FieldModel): string {
  return field.type === 'array' ? `array of ${field.items?.type ?? 'any'}` : field.type;
}

/**
 * Why a full permission string cannot be held in this model (a role's, stored or declared in
 * the config), or undefined when it can: its grammar, its entity, its condition.
 */
export function permissionProblem(
  text: string,
  entities: readonly Pick<EntityModel, 'plural' | 'fields'>[],
  customActions: CustomActions,
): string | undefined {
  if (text === SYSTEM_ADMIN || text === API_ACCESS) return undefined;
  const parsed = parsePermission(text, customActions);
  if (!parsed.ok) return parsed.reason;
  const entity = entities.find((e) => e.plural === parsed.permission.entity);
  if (!entity) return `unknown entity ${parsed.permission.entity}`;
  if (parsed.permission.field !== undefined) {
    const field = entity.fields.find((f) => f.name === parsed.permission.field);
    if (!field) return `unknown field "${parsed.permission.field}"`;
    return field.access
      ? undefined
      : `${entity.plural}.${field.name} has no access rules; everyone who may ${parsed.permission.action} the record may ${parsed.permission.action} it`;
  }
  if (parsed.permission.through) return throughProblem(entity.fields, parsed.permission.through);
  return parsed.permission.condition ? conditionProblem(entity.fields, parsed.permission.condition) : undefined;
}

/** How many references a rule may follow: comment -> ticket -> project -> customer. */
export const MAX_THROUGH_DEPTH = 3;

/** Why `@field` cannot follow this field (it must be a reference, or an array of references), or undefined. */
export function throughProblem(fields: readonly FieldModel[], name: string): string | undefined {
  const field = fields.find((f) => f.name === name);
  if (!field) return `unknown field "${name}"`;
  const ref = field.type === 'array' ? field.items?.ref : field.ref;
  if (!ref)
    return `@${name} must name a reference (objectId with ref, or an array of them); ${name} is ${describe(field)}`;
  return undefined;
}
