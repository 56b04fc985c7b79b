import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../model/packageRoot.js';
import { parsePermission } from './parsePermission.js';

/** The forms table of the permission grammar page: each example with what it parses to. */
function documentedForms(): { form: string; example: string }[] {
  const page = readFileSync(join(packageRoot, 'docs', 'reference', 'permissions.md'), 'utf8');
  const section = page.slice(page.indexOf('## Rule forms'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| form |')));
  return [...table.matchAll(/^\| `([^`]+)`[^|]* \| (?:`([^`]*)`)? *\|/gm)].map(([, form, example]) => ({
    form,
    example: example ?? form,
  }));
}

describe('the permission grammar as the documentation gives it', () => {
  it('documents every form, and each example parses as the form says', () => {
    const forms = documentedForms();
    expect(forms.map((f) => f.form)).toEqual([
      'entity:action',
      'entity:action:own',
      'entity:action:field:value[:own]',
      'entity:action:field:{{user.id}}',
      'entity:action:@field',
      'entity:customAction[...]',
      'entity.field:view',
      'system:admin',
    ]);
    const parsed = forms.map(({ example }) => {
      const result = parsePermission(example, 'any');
      if (!result.ok) throw new Error(`${example}: ${result.reason}`);
      return result.permission;
    });
    expect(parsed).toEqual([
      { entity: 'articles', action: 'view' },
      { entity: 'articles', action: 'edit', scope: 'own' },
      { entity: 'articles', action: 'view', condition: { field: 'status', value: 'published' } },
      { entity: 'tickets', action: 'view', condition: { field: 'assignee', value: '{{user.id}}' } },
      { entity: 'comments', action: 'view', through: 'ticket' },
      { entity: 'orders', action: 'approve', scope: 'own' },
      { entity: 'employees', action: 'view', field: 'salary' },
      { entity: 'system', action: 'admin' },
    ]);
  });
});
