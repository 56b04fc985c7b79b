import { parsePermission } from '../../runtime/access/parsePermission.js';
import { conditionProblem, throughProblem } from '../../runtime/access/permissionCondition.js';
import type { FieldModel, Ownership } from '../../runtime/model/types.js';
import { ACTIONS } from '../../runtime/model/types.js';
import type { PathSegment } from '../schema/loadYaml.js';

type Report = (path: PathSegment[], message: string) => void;

/** Checks the YAML `permissions:` entries, written without the entity prefix (`view:status:published`). */
export function checkRolePermissions(
  permissions: Record<string, string[]>,
  entity: { plural: string; ownership: Ownership; byName: Map<string, FieldModel>; customActions: readonly string[] },
  report: Report,
): void {
  for (const [role, list] of Object.entries(permissions)) {
    for (const [i, text] of list.entries()) {
      const path = ['permissions', role, i];
      const parsed = parsePermission(`${entity.plural}:${text}`, (plural) =>
        plural === entity.plural ? entity.customActions : undefined,
      );
      if (!parsed.ok) {
        report(path, `"${text}": ${parsed.reason}`);
        continue;
      }
      const { scope, condition, action, through } = parsed.permission;
      if (through) {
        const problem = throughProblem([...entity.byName.values()], through);
        if (problem) report(path, `"${text}": ${problem}`);
        continue;
      }
      if (scope === 'own' && entity.ownership === 'system')
        report(path, `"${text}": scope own needs an owned entity (this one is system-owned)`);
      if (scope && action === 'create') report(path, `"${text}": create takes no scope`);
      if (condition) {
        const problem = conditionProblem([...entity.byName.values()], condition);
        if (problem) report(path, `"${text}": ${problem}`);
      }
    }
  }
}

/** The spec's USER defaults: view own, create, edit own on every owned entity. */
export function defaultRolePermissions(plural: string, ownership: Ownership): Record<string, string[]> {
  if (ownership !== 'owned') return {};
  return { USER: [`${plural}:view:own`, `${plural}:create`, `${plural}:edit:own`] };
}

/** Every unconditioned permission string of an entity, for the role editor's list. */
export function enumeratePermissions(
  plural: string,
  ownership: Ownership,
  customActions: readonly string[] = [],
  fieldsUnderAccess: readonly string[] = [],
): string[] {
  const out: string[] = [];
  for (const action of [...ACTIONS, ...customActions]) {
    out.push(`${plural}:${action}`);
    if (action === 'create') continue;
    out.push(`${plural}:${action}:all`);
    if (ownership === 'owned') out.push(`${plural}:${action}:own`);
  }
  // A field under `access:` has its own two, which a role made through the API may hold.
  for (const field of fieldsUnderAccess) out.push(`${plural}.${field}:view`, `${plural}.${field}:edit`);
  return out;
}
