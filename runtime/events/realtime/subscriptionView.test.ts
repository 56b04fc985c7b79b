import { describe, expect, it } from 'vitest';
import type { Caller } from '../../context/caller.js';
import { namesOnlyByIdentity, sameCaller } from './subscriptionView.js';

describe('a constraint shared by many users', () => {
  const me = 'u1';
  it('stands for the caller where their id is compared by identity only', () => {
    expect(namesOnlyByIdentity(undefined, me)).toBe(true);
    expect(
      namesOnlyByIdentity(
        {
          or: [
            { field: 'status', op: 'eq', value: 'published' },
            { field: 'ownerId', op: 'eq', value: me },
            { field: 'assignees', op: 'contains', value: [me] },
            { not: { field: 'reviewer', op: 'in', value: ['x', me] } },
          ],
        },
        me,
      ),
    ).toBe(true);
  });

  it('keeps the id itself where a value no record holds could decide otherwise', () => {
    expect(namesOnlyByIdentity({ field: 'ownerId', op: 'gt', value: me }, me)).toBe(false);
    expect(namesOnlyByIdentity({ and: [{ field: 'name', op: 'textStartsWith', value: me }] }, me)).toBe(false);
    expect(
      namesOnlyByIdentity({ through: { field: 'project', collection: 'projects', where: undefined } } as never, me),
    ).toBe(false);
  });
});

describe('a stream authenticated again', () => {
  const permissions = new Set(['articles:list']);
  const caller = {
    user: { id: 'u1', email: 'a@example.test', roles: ['EDITOR'] },
    roles: ['EDITOR'],
    permissions,
    isAdmin: false,
    credential: { kind: 'session' as const, token: 't', issuedAt: 1 },
  } as never as Caller;

  it('keeps its constraints for the same user, roles, permissions and tenant', () => {
    expect(sameCaller(caller, { ...caller, user: { ...caller.user! }, roles: ['EDITOR'] })).toBe(true);
  });

  it('asks them again when anything they can depend on changed', () => {
    expect(sameCaller(caller, { ...caller, permissions: new Set(permissions) })).toBe(false);
    expect(sameCaller(caller, { ...caller, roles: ['EDITOR', 'AGENT'] })).toBe(false);
    expect(sameCaller(caller, { ...caller, requestedTenantId: 't2' })).toBe(false);
    expect(sameCaller(caller, { ...caller, user: { ...caller.user!, department: 'sales' } as never })).toBe(false);
    expect(sameCaller(caller, { ...caller, user: undefined })).toBe(false);
  });
});
