import { describe, expect, it } from 'vitest';
import type { Caller } from '../context/caller.js';
import { ApiError } from '../errors/apiError.js';
import type { EntityModel, FieldModel } from '../model/types.js';
import { accessFor } from './accessFor.js';
import { fieldView, hasFieldAccess, requireFieldEdits, seesField } from './fieldAccess.js';
import { parsePermission } from './parsePermission.js';
import { permissionProblem } from './permissionCondition.js';

const field = (name: string, access?: FieldModel['access']): FieldModel => ({
  name,
  label: name,
  type: 'string',
  required: false,
  unique: false,
  search: false,
  trackChanges: false,
  hidden: false,
  readOnly: false,
  system: false,
  filterable: true,
  ...(access ? { access } : {}),
});

const employees = {
  plural: 'employees',
  ownership: 'owned',
  fields: [
    field('ownerId'),
    field('name'),
    field('salary', { view: ['HR', 'owner'], edit: ['HR'] }),
    field('notes', { view: ['HR'], edit: ['HR'] }),
    field('badge', { view: ['owner'], edit: ['owner'] }),
  ],
} as unknown as EntityModel;

const caller = (roles: string[], permissions: string[] = [], id = 'u1'): Caller => ({
  user: { id, email: `${id}@example.test`, displayName: id },
  roles,
  permissions: new Set(permissions),
  isAdmin: roles.includes('ADMIN'),
});

describe('field access', () => {
  it('shows every field to ADMIN, to listed roles, and where no field has rules', () => {
    expect(hasFieldAccess(employees)).toBe(true);
    expect(fieldView(employees, caller(['ADMIN']))).toBeUndefined();
    const hr = fieldView(employees, caller(['HR']));
    expect([...(hr?.hidden ?? [])]).toEqual([]);
    expect([...(hr?.ownerOnly ?? [])]).toEqual(['badge']);
    const plain = { ...employees, fields: [field('name')] } as unknown as EntityModel;
    expect(fieldView(plain, caller(['USER']))).toBeUndefined();
  });

  it('lets an owner see their own record’s owner fields, and nobody else’s', () => {
    const view = fieldView(employees, caller(['USER']));
    expect([...view!.hidden]).toEqual(['notes']);
    expect([...view!.ownerOnly].sort()).toEqual(['badge', 'salary']);
    expect([...view!.unseen].sort()).toEqual(['badge', 'notes', 'salary']);
    expect(seesField(view, 'salary', { id: 'e1', ownerId: 'u1' })).toBe(true);
    expect(seesField(view, 'salary', { id: 'e2', ownerId: 'u2' })).toBe(false);
    expect(seesField(view, 'notes', { id: 'e1', ownerId: 'u1' })).toBe(false);
    expect(seesField(view, 'name', { id: 'e2', ownerId: 'u2' })).toBe(true);
  });

  it('counts a field permission as a listed role; edit implies view', () => {
    const viewer = fieldView(employees, caller(['PAYROLL'], ['employees.salary:view']));
    expect(viewer!.unseen.has('salary')).toBe(false);
    const editor = fieldView(employees, caller(['PAYROLL'], ['employees.notes:edit']));
    expect(editor!.unseen.has('notes')).toBe(false);
    expect(() =>
      requireFieldEdits(employees, caller(['PAYROLL'], ['employees.notes:edit']), { notes: 'x' }),
    ).not.toThrow();
  });

  it('refuses a value the caller may not set with 403 naming each field', () => {
    const refusal = (run: () => void) => {
      try {
        run();
      } catch (error) {
        return error as ApiError;
      }
      throw new Error('not refused');
    };
    const error = refusal(() => requireFieldEdits(employees, caller(['USER']), { name: 'A', salary: 1, notes: 'n' }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(403);
    expect(error.details).toEqual({ salary: 'you may not set this field', notes: 'you may not set this field' });
    // `owner` may edit: on a create (the creator owns it) and on their own record, not on another's.
    expect(() => requireFieldEdits(employees, caller(['USER']), { badge: 'b' })).not.toThrow();
    expect(() =>
      requireFieldEdits(employees, caller(['USER']), { badge: 'b' }, { id: 'e', ownerId: 'u1' }),
    ).not.toThrow();
    expect(
      refusal(() => requireFieldEdits(employees, caller(['USER']), { badge: 'b' }, { id: 'e', ownerId: 'u2' })).status,
    ).toBe(403);
    expect(() => requireFieldEdits(employees, caller(['HR']), { salary: 1, notes: 'n' })).not.toThrow();
  });
});

describe('field permissions', () => {
  it('parse as entity.field:view or :edit, and nothing more', () => {
    expect(parsePermission('employees.salary:view')).toEqual({
      ok: true,
      permission: { entity: 'employees', action: 'view', field: 'salary' },
    });
    expect(parsePermission('employees.salary:delete').ok).toBe(false);
    expect(parsePermission('employees.salary:view:all').ok).toBe(false);
    expect(parsePermission('employees.:view').ok).toBe(false);
  });

  it('name a field under access rules', () => {
    const actions = () => undefined;
    expect(permissionProblem('employees.salary:edit', [employees], actions)).toBeUndefined();
    expect(permissionProblem('employees.name:view', [employees], actions)).toContain('has no access rules');
    expect(permissionProblem('employees.wage:view', [employees], actions)).toContain('unknown field');
  });

  it('never grant the record itself', () => {
    const holder = caller(['PAYROLL'], ['employees.salary:view', 'employees.salary:edit']);
    expect(accessFor(holder, employees, 'view')).toEqual({ allowed: false });
    expect(accessFor(holder, employees, 'edit')).toEqual({ allowed: false });
  });
});
