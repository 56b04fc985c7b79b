import { describe, expect, it } from 'vitest';
import { namesOnlyByIdentity } from './subscriptionView.js';

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
