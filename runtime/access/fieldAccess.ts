import type { Caller } from '../context/caller.js';
import { ApiError } from '../errors/apiError.js';
import { type EntityModel, type FieldModel, OWNER_ROLE } from '../model/types.js';
import type { Doc } from '../store/types.js';

/**
 * What a caller may see of an entity whose fields have `access:` rules. Absent (undefined) where
 * the caller sees every field: an entity without such fields, ADMIN, the system.
 */
export interface FieldView {
  /** Fields the caller sees on no record. */
  readonly hidden: ReadonlySet<string>;
  /** Fields the caller sees only on records they own (`owner` in the field's `view`). */
  readonly ownerOnly: ReadonlySet<string>;
  /**
   * Fields the caller may not see on every record: what lists may not filter, sort, group or
   * measure by, nor page on (any of these would tell the values of records the caller may not
   * see them on).
   */
  readonly unseen: ReadonlySet<string>;
  /** The caller's user id, for `owner`. */
  readonly userId?: string;
}

/** The fields under `access:` of each entity. */
const restricted = new WeakMap<EntityModel, FieldModel[]>();

function restrictedFields(entity: EntityModel): FieldModel[] {
  let fields = restricted.get(entity);
  if (!fields) {
    fields = entity.fields.filter((field) => field.access !== undefined);
    restricted.set(entity, fields);
  }
  return fields;
}

/** Whether any field of the entity is under `access:`. */
export function hasFieldAccess(entity: EntityModel): boolean {
  return restrictedFields(entity).length > 0;
}

/**
 * Whether the caller's roles or permissions list them for `action` on the field (without `owner`,
 * which depends on the record). A field permission is `<plural>.<field>:view` or `:edit`; edit
 * implies view.
 */
function listed(caller: Caller, entity: EntityModel, field: FieldModel, action: 'view' | 'edit'): boolean {
  const roles = action === 'view' ? field.access!.view : field.access!.edit;
  if (caller.roles.some((role) => roles.includes(role))) return true;
  const permission = `${entity.plural}.${field.name}:`;
  if (caller.permissions.has(`${permission}edit`)) return true;
  return action === 'view' && caller.permissions.has(`${permission}view`);
}

/** What a caller may see of an entity, apart from who they are: decided by roles and permissions. */
type Shape = Pick<FieldView, 'hidden' | 'ownerOnly' | 'unseen'>;

/**
 * Shapes by the caller's permission set (shared by every caller of the same roles until a role
 * changes), then by their roles and whether they are signed in: a request builds no set.
 */
const shapes = new WeakMap<ReadonlySet<string>, Map<string, Map<EntityModel, Shape | null>>>();
/** The views of one caller (a request's), by entity. */
const views = new WeakMap<Caller, Map<EntityModel, FieldView | null>>();

function shapeOf(entity: EntityModel, caller: Caller, fields: FieldModel[]): Shape | null {
  let byRoles = shapes.get(caller.permissions);
  if (!byRoles) {
    byRoles = new Map();
    shapes.set(caller.permissions, byRoles);
  }
  const key = `${caller.user ? 'user' : 'anonymous'}\u0000${caller.roles.join('\u0000')}`;
  let byEntity = byRoles.get(key);
  if (!byEntity) {
    byEntity = new Map();
    byRoles.set(key, byEntity);
  }
  const known = byEntity.get(entity);
  if (known !== undefined) return known;
  const hidden = new Set<string>();
  const ownerOnly = new Set<string>();
  for (const field of fields) {
    if (listed(caller, entity, field, 'view')) continue;
    if (caller.user && field.access!.view.includes(OWNER_ROLE)) ownerOnly.add(field.name);
    else hidden.add(field.name);
  }
  const shape =
    hidden.size + ownerOnly.size === 0 ? null : { hidden, ownerOnly, unseen: new Set([...hidden, ...ownerOnly]) };
  byEntity.set(entity, shape);
  return shape;
}

/** What `caller` may see of `entity`'s records; undefined where they see every field. */
export function fieldView(entity: EntityModel, caller: Caller): FieldView | undefined {
  const fields = restrictedFields(entity);
  if (fields.length === 0 || caller.isAdmin) return undefined;
  let byEntity = views.get(caller);
  const known = byEntity?.get(entity);
  if (known !== undefined) return known ?? undefined;
  const shape = shapeOf(entity, caller, fields);
  const view: FieldView | null = shape ? { ...shape, userId: caller.user?.id } : null;
  if (!byEntity) {
    byEntity = new Map();
    views.set(caller, byEntity);
  }
  byEntity.set(entity, view);
  return view ?? undefined;
}

/** Whether the caller sees `field` on `doc` (a record of the entity). */
export function seesField(view: FieldView | undefined, field: string, doc: Doc): boolean {
  if (!view?.unseen.has(field)) return true;
  return view.ownerOnly.has(field) && view.userId !== undefined && doc.ownerId === view.userId;
}

/**
 * Refuses (403, naming the fields) values the caller may not set: fields under `access:` whose
 * `edit` lists none of the caller's roles (nor `owner` for the record's owner: `owner` is the
 * caller on a create, since the creator owns the new record). `existing` is the record an update
 * changes.
 */
export function requireFieldEdits(
  entity: EntityModel,
  caller: Caller,
  body: Record<string, unknown>,
  existing?: Doc,
  /** Where the values sit in the request (`items.3.`), for the error's details. */
  at = '',
): void {
  const locked = lockedFields(entity, caller, existing);
  if (locked.size === 0) return;
  const refused = [...locked].filter((name) => name in body);
  if (refused.length === 0) return;
  throw new ApiError(
    'FORBIDDEN',
    `You may not set ${refused.map((name) => `"${name}"`).join(', ')}`,
    Object.fromEntries(refused.map((name) => [`${at}${name}`, 'you may not set this field'])),
  );
}

/** No field locked: what callers who may set every field get. */
const NONE_LOCKED: ReadonlySet<string> = new Set();

/**
 * The fields under `access:` the caller may not set: on `existing` (an update), or on a new
 * record (which the caller would own).
 */
export function lockedFields(entity: EntityModel, caller: Caller, existing?: Doc): ReadonlySet<string> {
  const fields = restrictedFields(entity);
  if (fields.length === 0 || caller.isAdmin) return NONE_LOCKED;
  const locked = new Set<string>();
  for (const field of fields) {
    if (listed(caller, entity, field, 'edit')) continue;
    const owns =
      field.access!.edit.includes(OWNER_ROLE) &&
      caller.user !== undefined &&
      (existing === undefined || existing.ownerId === caller.user.id);
    if (!owns) locked.add(field.name);
  }
  return locked;
}

/** How far a caller may see or set a field: on every record, on their own records only, or on none. */
export type FieldReach = 'all' | 'own' | 'none';

/** What the metadata tells a caller of a field under `access:`: the rule, and where it lets them. */
export interface FieldAbilities {
  view: FieldReach;
  edit: FieldReach;
}

/** What `caller` may do with `field` (a field under `access:`) of `entity`'s records. */
export function fieldAbilities(entity: EntityModel, caller: Caller, field: FieldModel): FieldAbilities {
  const reach = (action: 'view' | 'edit'): FieldReach => {
    if (caller.isAdmin || listed(caller, entity, field, action)) return 'all';
    const roles = action === 'view' ? field.access!.view : field.access!.edit;
    return caller.user && roles.includes(OWNER_ROLE) ? 'own' : 'none';
  };
  return { view: reach('view'), edit: reach('edit') };
}
