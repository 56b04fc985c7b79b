import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiFailure, api } from '../api.js';
import type { AvailablePermission, Role } from '../apiTypes.js';
import { DocsLink } from '../docsLink.js';
import { isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { useAction } from '../useAction.js';
import { NotAllowed, Outcome, Problem } from './Problem.js';

export type { AvailablePermission, Role };

/** Permissions picked from the available-permissions list, grouped by entity. */
export function PermissionPicker({
  available,
  chosen,
  onChange,
}: {
  available: AvailablePermission[];
  chosen: string[];
  onChange(chosen: string[]): void;
}) {
  const groups = useMemo(() => {
    const byEntity = new Map<string, AvailablePermission[]>();
    for (const permission of available)
      byEntity.set(permission.entity, [...(byEntity.get(permission.entity) ?? []), permission]);
    return [...byEntity];
  }, [available]);
  return (
    <div class="permission-groups">
      <p class="hint">
        Conditions (<code>tickets:view:assignee:{'{{user.id}}'}</code>) and rules through a reference (
        <code>comments:view:@ticket</code>) can be typed in entity files and the config.{' '}
        <DocsLink page="reference/permissions#rule-forms">The permission grammar</DocsLink>
      </p>
      {groups.map(([entity, permissions]) => (
        <fieldset key={entity} class="choices">
          <legend>{entity}</legend>
          {permissions.map((permission) => (
            <label key={permission.key} class="check" title={permission.description}>
              <input
                type="checkbox"
                value={permission.key}
                checked={chosen.includes(permission.key)}
                onChange={(e) =>
                  onChange(
                    e.currentTarget.checked ? [...chosen, permission.key] : chosen.filter((k) => k !== permission.key),
                  )
                }
              />
              <code>{permission.key}</code>
            </label>
          ))}
        </fieldset>
      ))}
    </div>
  );
}

/** /admin/roles: roles with permissions picked from GET /roles/available-permissions (admins). */
export function Roles({ session }: { session: Session }) {
  const [roles, setRoles] = useState<Role[]>([]);
  const [available, setAvailable] = useState<AvailablePermission[]>([]);
  const [editing, setEditing] = useState<Role | 'new' | undefined>(undefined);
  const admin = isAdmin(session.me);
  const load = () =>
    api<{ items: Role[] }>('GET', '/roles')
      .then((answer) => setRoles(answer.items))
      .catch(setFailure);
  const { status, setStatus, failure, setFailure, run } = useAction(load);
  useEffect(() => {
    if (!admin) return;
    void load();
    api<AvailablePermission[]>('GET', '/roles/available-permissions').then(setAvailable).catch(setFailure);
  }, []);
  if (!admin) return <NotAllowed what="manage roles (administrators only)" />;
  const remove = (role: Role) => {
    if (confirm(`Delete the role ${role.label}?`))
      void run(`Deleted ${role.label}.`, () => api('DELETE', `/roles/${encodeURIComponent(role.key)}`));
  };
  return (
    <section aria-labelledby="roles-title">
      <div class="heading">
        <h1 id="roles-title">Roles</h1>
        <button type="button" class="primary" onClick={() => setEditing('new')}>
          New role
        </button>
      </div>
      <Outcome status={status} failure={failure} />
      {editing && (
        <RoleForm
          role={editing === 'new' ? undefined : editing}
          available={available}
          onSaved={(role) => {
            setEditing(undefined);
            setStatus(`Saved ${role.label}.`);
            void load();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Label</th>
              <th scope="col">Permissions</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {roles.map((role) => (
              <tr key={role.key}>
                <td>
                  <code>{role.key}</code>
                  {role.isBuiltin && <span class="badge">Built-in</span>}
                  {role.origin === 'file' && <span class="badge">From files</span>}
                </td>
                <td>
                  {role.label}
                  {role.description && <p class="muted">{role.description}</p>}
                </td>
                <td>{role.permissions.length}</td>
                <td class="actions">
                  <button type="button" class="small" onClick={() => setEditing(role)}>
                    Edit
                  </button>
                  {!role.isBuiltin && role.origin !== 'file' && (
                    <button type="button" class="small danger" onClick={() => remove(role)}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function RoleForm({
  role,
  available,
  onSaved,
  onCancel,
}: {
  role?: Role;
  available: AvailablePermission[];
  onSaved(role: Role): void;
  onCancel(): void;
}) {
  const [key, setKey] = useState(role?.key ?? '');
  const [label, setLabel] = useState(role?.label ?? '');
  const [description, setDescription] = useState(role?.description ?? '');
  const [permissions, setPermissions] = useState<string[]>(role?.permissions ?? []);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(undefined);
  // Permissions the role holds that the list does not offer (system:admin, older grants) stay as they are.
  const offered = new Set(available.map((p) => p.key));
  const kept = permissions.filter((p) => !offered.has(p));
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = { label, ...(description ? { description } : {}), permissions };
    try {
      const saved = role
        ? await api<Role>('PUT', `/roles/${encodeURIComponent(role.key)}`, { body })
        : await api<Role>('POST', '/roles', { body: { key, ...body } });
      onSaved(saved);
    } catch (error) {
      if (error instanceof ApiFailure) setErrors(error.details);
      setFailure(error);
    }
  };
  return (
    <form class="record-form panel" onSubmit={submit} aria-label={role ? `Edit role ${role.label}` : 'New role'}>
      {failure !== undefined && <Problem error={failure} title="The role was not saved" />}
      <div class="field">
        <label for="role-key">Key</label>
        <input
          id="role-key"
          required
          disabled={!!role}
          pattern="[A-Z][A-Z0-9_]*"
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <small class="muted">Capitals, digits and underscores, e.g. EDITOR.</small>
        {errors.key && <p class="field-error">{errors.key}</p>}
      </div>
      <div class="field">
        <label for="role-label">Label</label>
        <input id="role-label" required value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        {errors.label && <p class="field-error">{errors.label}</p>}
      </div>
      <div class="field">
        <label for="role-description">Description</label>
        <input id="role-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </div>
      <PermissionPicker available={available} chosen={permissions} onChange={setPermissions} />
      {kept.length > 0 && <p class="muted">Also kept: {kept.join(', ')}</p>}
      {errors.permissions && <p class="field-error">{errors.permissions}</p>}
      <div class="actions">
        <button type="submit" class="primary">
          Save role
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
