import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, api } from '../api.js';
import type { ApiKeyInfo, CreatedApiKey } from '../apiTypes.js';
import { isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { useAction } from '../useAction.js';
import { Outcome, Problem } from './Problem.js';
import { type AvailablePermission, PermissionPicker } from './Roles.js';

type ApiKey = ApiKeyInfo;
type CreatedKey = CreatedApiKey;

const DAY_MS = 24 * 60 * 60 * 1000;
const dateInput = (date: Date) => date.toISOString().slice(0, 10);

/**
 * /admin/apikeys: the caller's own API keys. A new key holds a subset of the caller's
 * permissions; its token is shown once, with a copy button. Revoking is immediate.
 */
export function ApiKeys({ session }: { session: Session }) {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [available, setAvailable] = useState<AvailablePermission[]>([]);
  const [created, setCreated] = useState<CreatedKey | undefined>(undefined);
  const load = () =>
    api<{ items: ApiKey[] }>('GET', '/apikeys')
      .then((answer) => setKeys(answer.items))
      .catch(setFailure);
  const { status, failure, setFailure, run } = useAction(load);
  useEffect(() => {
    void load();
    // Admins choose from every permission; others from the ones they hold.
    if (isAdmin(session.me))
      api<AvailablePermission[]>('GET', '/roles/available-permissions').then(setAvailable).catch(setFailure);
    else
      setAvailable(
        session.me.permissions.map((key) => {
          const [entity, action] = key.split(':');
          return { key, entity, action };
        }),
      );
  }, []);
  const revoke = (key: ApiKey) => {
    if (confirm(`Revoke the key ${key.name}? Requests with it fail from now on.`))
      void run(`Revoked ${key.name}.`, () => api('DELETE', `/apikeys/${key.id}`));
  };
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <p class="muted">
        A key acts for you with the permissions it was given (never more than you hold): send it as{' '}
        <code>Authorization: Bearer &lt;token&gt;</code>.
      </p>
      <Outcome status={status} failure={failure} />
      {created ? (
        <ShownOnce created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <NewKey
          available={available}
          onCreated={(key) => {
            setCreated(key);
            void load();
          }}
        />
      )}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Permissions</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  No keys yet.
                </td>
              </tr>
            )}
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.lastEight}</code>
                </td>
                <td>{key.permissions.join(', ')}</td>
                <td>{new Date(key.expiresAt).toLocaleDateString()}</td>
                <td>{key.lastUsedAt ? new Date(key.lastUsedAt).toLocaleString() : '—'}</td>
                <td>
                  <button type="button" class="small danger" onClick={() => revoke(key)}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function ShownOnce({ created, onDone }: { created: CreatedKey; onDone(): void }) {
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.token);
      setCopied('Copied.');
    } catch {
      // Without clipboard access (a page not served over HTTPS), the token is selected to copy by hand.
      (document.getElementById('new-token') as HTMLInputElement | null)?.select();
      setCopied('Press Ctrl+C (or ⌘C) to copy the selected token.');
    }
  };
  return (
    <section class="panel notice-box" aria-label="New API key">
      <p>
        <strong>{created.name}</strong>: copy the token now. This is the only time it is shown.
      </p>
      <div class="actions">
        <input id="new-token" class="code" readOnly value={created.token} size={50} aria-label="API key token" />
        <button type="button" class="primary" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      <p role="status" class="muted">
        {copied}
      </p>
    </section>
  );
}

function NewKey({ available, onCreated }: { available: AvailablePermission[]; onCreated(key: CreatedKey): void }) {
  const [name, setName] = useState('');
  const [expires, setExpires] = useState(dateInput(new Date(Date.now() + 90 * DAY_MS)));
  const [permissions, setPermissions] = useState<string[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(undefined);
    try {
      const expiresAt = new Date(`${expires}T23:59:59`).toISOString();
      onCreated(await api<CreatedKey>('POST', '/apikeys', { body: { name, permissions, expiresAt } }));
      setName('');
      setPermissions([]);
    } catch (error) {
      if (error instanceof ApiFailure) setErrors(error.details);
      setFailure(error);
    }
  };
  return (
    <details class="panel">
      <summary>Create a key</summary>
      <form class="record-form" onSubmit={submit} aria-label="New API key">
        {failure !== undefined && <Problem error={failure} title="The key was not created" />}
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          {errors.name && <p class="field-error">{errors.name}</p>}
        </div>
        <div class="field">
          <label for="key-expires">Expires on</label>
          <input
            id="key-expires"
            type="date"
            required
            min={dateInput(new Date(Date.now() + DAY_MS))}
            value={expires}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
          {errors.expiresAt && <p class="field-error">{errors.expiresAt}</p>}
        </div>
        <PermissionPicker available={available} chosen={permissions} onChange={setPermissions} />
        {errors.permissions && <p class="field-error">{errors.permissions}</p>}
        <div class="actions">
          <button type="submit" class="primary">
            Create key
          </button>
        </div>
      </form>
    </details>
  );
}
