import { useState } from 'preact/hooks';
import { ApiFailure, api } from '../api.js';
import { type Draft, FieldInput, fromDraft, toDraft } from '../fields/FieldInput.js';
import type { EntityMeta, RecordDoc } from '../model.js';
import { can } from '../permissions.js';
import type { Session } from '../session.js';
import { Problem } from './Problem.js';

type Endpoint = EntityMeta['endpoints'][number];

/** An endpoint's name as a button says it: `lowStock` → "Low stock". */
export function actionLabel(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The entity's custom endpoints the caller may call, as actions: on a record page those on one
 * record (`/{id}/...`), on the list those on the collection. One with a declared body opens a
 * form of its fields; a record answer replaces the record shown, any other answer is shown as
 * it comes.
 */
export function EndpointActions({
  session,
  entity,
  record,
  onRecord,
}: {
  session: Session;
  entity: EntityMeta;
  record?: RecordDoc;
  onRecord?(record: RecordDoc): void;
}) {
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [answer, setAnswer] = useState<{ name: string; value: unknown } | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  const endpoints = entity.endpoints.filter(
    (e) => e.path.startsWith('/{id}/') === (record !== undefined) && can(session.me, entity.plural, e.action),
  );
  if (endpoints.length === 0) return null;

  const call = async (endpoint: Endpoint) => {
    const label = actionLabel(endpoint.name);
    const body: Record<string, unknown> = {};
    const local: Record<string, string> = {};
    for (const field of endpoint.body ?? []) {
      try {
        const value = fromDraft(field, drafts[endpoint.name]?.[field.name] ?? toDraft(field, field.default));
        if (value !== null) body[field.name] = value;
      } catch (error) {
        local[field.name] = (error as Error).message;
      }
    }
    setErrors(local);
    setFailure(undefined);
    setStatus(undefined);
    setAnswer(undefined);
    if (Object.keys(local).length > 0) return;
    if (endpoint.method === 'DELETE' && !confirm(`${label}? This cannot be undone.`)) return;
    setBusy(true);
    try {
      const path = `/${entity.plural}${endpoint.path.replace('{id}', encodeURIComponent(record?.id ?? ''))}`;
      const sendsBody = !['GET', 'DELETE'].includes(endpoint.method);
      const result = await api<unknown>(endpoint.method, path, sendsBody ? { body } : {});
      if (endpoint.response === 'record' && record && result && typeof result === 'object' && 'id' in result)
        onRecord?.(result as RecordDoc);
      else if (result !== undefined && result !== null) setAnswer({ name: endpoint.name, value: result });
      setStatus(`${label}: done.`);
      setOpen(undefined);
    } catch (error) {
      if (error instanceof ApiFailure) setErrors(error.details);
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="endpoint-actions" aria-label="Actions">
      <div class="actions">
        {endpoints.map((endpoint) => {
          const label = actionLabel(endpoint.name);
          const hasForm = (endpoint.body?.length ?? 0) > 0;
          return (
            <button
              key={endpoint.name}
              type="button"
              title={endpoint.description ?? undefined}
              disabled={busy}
              aria-expanded={hasForm ? open === endpoint.name : undefined}
              onClick={() => {
                if (!hasForm) return void call(endpoint);
                setErrors({});
                setFailure(undefined);
                setOpen(open === endpoint.name ? undefined : endpoint.name);
              }}
            >
              {hasForm ? `${label}…` : label}
            </button>
          );
        })}
      </div>
      {endpoints
        .filter((endpoint) => endpoint.name === open)
        .map((endpoint) => (
          <form
            key={endpoint.name}
            class="record-form"
            aria-label={actionLabel(endpoint.name)}
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              void call(endpoint);
            }}
          >
            {endpoint.description && <p class="muted">{endpoint.description}</p>}
            {(endpoint.body ?? []).map((field) => {
              const draft = drafts[endpoint.name] ?? {};
              return (
                <FieldInput
                  key={field.name}
                  field={field}
                  value={draft[field.name] ?? toDraft(field, field.default)}
                  error={errors[field.name]}
                  session={session}
                  onChange={(value) => setDrafts({ ...drafts, [endpoint.name]: { ...draft, [field.name]: value } })}
                />
              );
            })}
            <div class="actions">
              <button type="submit" class="primary" disabled={busy}>
                {actionLabel(endpoint.name)}
              </button>
              <button type="button" onClick={() => setOpen(undefined)}>
                Cancel
              </button>
            </div>
          </form>
        ))}
      <p role="status" class="muted">
        {status}
      </p>
      {failure !== undefined && <Problem error={failure} />}
      {answer && (
        <figure class="endpoint-answer">
          <figcaption>{actionLabel(answer.name)}</figcaption>
          <pre class="code">{JSON.stringify(answer.value, null, 2)}</pre>
        </figure>
      )}
    </section>
  );
}
