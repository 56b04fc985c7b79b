import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiFailure, api, query } from '../api.js';
import type { UserView } from '../apiTypes.js';
import { isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { useAction } from '../useAction.js';
import { NotAllowed, Outcome, Problem } from './Problem.js';
import type { Role } from './Roles.js';

type User = UserView;

/** /admin/users: accounts (admins): create, roles, disable, password-reset mail, two-factor reset. */
export function Users({ session }: { session: Session }) {
  const [users, setUsers] = useState<User[]>([]);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [roles, setRoles] = useState<Role[]>([]);
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const [creating, setCreating] = useState(false);
  const admin = isAdmin(session.me);
  // ?id= (a reference's link) shows that account; ?q= those whose email or name contains it.
  const location = useLocation();
  const only = typeof location.query.id === 'string' ? location.query.id : undefined;
  const [search, setSearch] = useState(typeof location.query.q === 'string' ? location.query.q : '');

  const load = async (cursor?: string) => {
    try {
      const params = { limit: 50, cursor, id: only, q: only ? undefined : search.trim() || undefined };
      const page = await api<{ items: User[]; nextCursor?: string }>('GET', `/users${query(params)}`);
      setUsers(cursor ? [...users, ...page.items] : page.items);
      setNext(page.nextCursor);
    } catch (error) {
      setFailure(error);
    }
  };
  const { status, failure, setFailure, run: act } = useAction(() => load());
  useEffect(() => {
    if (admin) void load();
  }, [only]);
  useEffect(() => {
    if (!admin) return;
    api<{ items: Role[] }>('GET', '/roles')
      .then((answer) => setRoles(answer.items))
      .catch(setFailure);
  }, []);
  if (!admin) return <NotAllowed what="manage users (administrators only)" />;

  return (
    <section aria-labelledby="users-title">
      <div class="heading">
        <h1 id="users-title">Users</h1>
        <button type="button" class="primary" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          New user
        </button>
      </div>
      <form
        class="toolbar"
        aria-label="Search users"
        onSubmit={(e) => {
          e.preventDefault();
          // From one account's page, the search lists them all again (the move reloads).
          if (only) location.route('/admin/users');
          else void load();
        }}
      >
        <label>
          Search
          <input
            type="search"
            name="q"
            value={search}
            placeholder="Email or name"
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Search</button>
        {only && <a href="/admin/users">All users</a>}
      </form>
      <Outcome status={status} failure={failure} />
      {creating && (
        <NewUser
          roles={roles}
          onCreated={(user) => {
            setCreating(false);
            void act(`Created ${user.email}.`, async () => undefined);
          }}
        />
      )}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Roles</th>
              <th scope="col">Sign-in</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.map((user) => (
              <tr key={user.id} class={user.disabled ? 'archived' : undefined}>
                <td>
                  {user.displayName}
                  {user.disabled && <span class="badge">Disabled</span>}
                  {user.mfaEnabled && <span class="badge">2FA</span>}
                </td>
                <td>{user.email}</td>
                <td>
                  {editing === user.id ? (
                    <RolePicker
                      roles={roles}
                      chosen={user.roles}
                      onSave={(chosen) => {
                        setEditing(undefined);
                        void act(`Roles of ${user.email} saved.`, () =>
                          api('PUT', `/users/${user.id}`, { body: { roles: chosen } }),
                        );
                      }}
                      onCancel={() => setEditing(undefined)}
                    />
                  ) : (
                    user.roles.join(', ')
                  )}
                </td>
                <td>{user.authSource}</td>
                <td>{user.lastLoginAt ? new Date(user.lastLoginAt).toLocaleString() : '—'}</td>
                <td class="actions">
                  <button type="button" class="small" onClick={() => setEditing(user.id)}>
                    Roles
                  </button>
                  <button
                    type="button"
                    class="small"
                    onClick={() =>
                      void act(`${user.email} ${user.disabled ? 'enabled' : 'disabled'}.`, () =>
                        api('PUT', `/users/${user.id}`, { body: { disabled: !user.disabled } }),
                      )
                    }
                  >
                    {user.disabled ? 'Enable' : 'Disable'}
                  </button>
                  {user.authSource === 'local' && !user.disabled && (
                    <button
                      type="button"
                      class="small"
                      onClick={() =>
                        void act(`A password-reset mail is on its way to ${user.email}.`, () =>
                          api('POST', `/users/${user.id}/password-reset`),
                        )
                      }
                    >
                      Send password reset
                    </button>
                  )}
                  {user.mfaEnabled && (
                    <button
                      type="button"
                      class="small"
                      onClick={() =>
                        void act(`Two-factor sign-in of ${user.email} reset.`, () =>
                          api('POST', `/users/${user.id}/mfa/reset`),
                        )
                      }
                    >
                      Reset 2FA
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Load more
        </button>
      )}
    </section>
  );
}

function RolePicker({
  roles,
  chosen,
  onSave,
  onCancel,
}: {
  roles: Role[];
  chosen: string[];
  onSave(chosen: string[]): void;
  onCancel(): void;
}) {
  const [picked, setPicked] = useState<string[]>(chosen);
  return (
    <div class="choices">
      <RoleChecks roles={roles} picked={picked} onChange={setPicked} hiddenLegend />
      <button type="button" class="small primary" onClick={() => onSave(picked)}>
        Save
      </button>
      <button type="button" class="small" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

function NewUser({ roles, onCreated }: { roles: Role[]; onCreated(user: User): void }) {
  const [email, setEmail] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [authSource, setAuthSource] = useState<'local' | 'ldap'>('local');
  const [password, setPassword] = useState('');
  const [picked, setPicked] = useState<string[]>(['USER']);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const user = await api<User>('POST', '/users', {
        body: { email, displayName, roles: picked, authSource, ...(password ? { password } : {}) },
      });
      onCreated(user);
    } catch (error) {
      if (error instanceof ApiFailure) setErrors(error.details);
      setFailure(error);
    }
  };
  const error = (name: string) =>
    errors[name] && (
      <p id={`new-${name}-error`} class="field-error">
        {errors[name]}
      </p>
    );
  return (
    <form class="record-form panel" onSubmit={submit} aria-label="New user">
      {failure !== undefined && <Problem error={failure} title="The user was not created" />}
      <div class="field">
        <label for="new-email">Email</label>
        <input id="new-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        {error('email')}
      </div>
      <div class="field">
        <label for="new-name">Display name</label>
        <input id="new-name" required value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} />
        {error('displayName')}
      </div>
      <div class="field">
        <label for="new-source">Signs in with</label>
        <select
          id="new-source"
          value={authSource}
          onChange={(e) => setAuthSource(e.currentTarget.value as 'local' | 'ldap')}
        >
          <option value="local">A password</option>
          <option value="ldap">The directory (LDAP)</option>
        </select>
      </div>
      {authSource === 'local' && (
        <div class="field">
          <label for="new-password">Password</label>
          <input
            id="new-password"
            type="password"
            autocomplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <small class="muted">Leave empty to mail the user a link to choose one.</small>
          {error('password')}
        </div>
      )}
      <RoleChecks roles={roles} picked={picked} onChange={setPicked} />
      {error('roles')}
      <div class="actions">
        <button type="submit" class="primary">
          Create user
        </button>
      </div>
    </form>
  );
}

function RoleChecks({
  roles,
  picked,
  onChange,
  hiddenLegend,
}: {
  roles: Role[];
  picked: string[];
  onChange(picked: string[]): void;
  hiddenLegend?: boolean;
}) {
  return (
    <fieldset class="choices">
      <legend class={hiddenLegend ? 'visually-hidden' : undefined}>Roles</legend>
      {roles.map((role) => (
        <label key={role.key} class="check">
          <input
            type="checkbox"
            checked={picked.includes(role.key)}
            onChange={(e) =>
              onChange(e.currentTarget.checked ? [...picked, role.key] : picked.filter((k) => k !== role.key))
            }
          />
          {role.label}
        </label>
      ))}
    </fieldset>
  );
}
