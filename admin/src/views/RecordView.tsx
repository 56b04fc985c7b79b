import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api.js';
import { formatValue } from '../fields/formatValue.js';
import { RefValue } from '../fields/RefLink.js';
import { type EntityMeta, onRecord, type RecordDoc, recordTitle } from '../model.js';
import { can, isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { EndpointActions } from './EndpointActions.js';
import { JobMetrics } from './JobMetrics.js';
import { NotAllowed, Problem } from './Problem.js';
import { RelatedRecords } from './RelatedRecords.js';

export function RecordView({ session, plural, id }: { session: Session; plural: string; id: string }) {
  const entity = session.entity(plural);
  if (!entity || !can(session.me, plural, 'view'))
    return <NotAllowed what={`view ${entity?.label.toLowerCase() ?? plural}, or it does not exist`} />;
  return <ViewOf session={session} entity={entity} id={id} />;
}

function ViewOf({ session, entity, id }: { session: Session; entity: EntityMeta; id: string }) {
  const { route } = useLocation();
  const [record, setRecord] = useState<RecordDoc | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [started, setStarted] = useState<string | undefined>(undefined);
  const canEdit = can(session.me, entity.plural, 'edit');
  const canDelete = can(session.me, entity.plural, 'delete');
  const base = `/${entity.plural}/${encodeURIComponent(id)}`;

  useEffect(() => {
    setFailure(undefined);
    api<RecordDoc>('GET', base).then(setRecord).catch(setFailure);
  }, [base]);

  const act = async (label: string, call: () => Promise<RecordDoc | undefined>) => {
    setStatus(undefined);
    setFailure(undefined);
    try {
      const next = await call();
      if (next) setRecord(next);
      setStatus(label);
    } catch (error) {
      setFailure(error);
    }
  };

  if (!record) return failure ? <Problem error={failure} /> : <p class="loading">Loading…</p>;
  const numeric = entity.fields.filter((f) => !f.readOnly && !f.localized && (f.type === 'int' || f.type === 'float'));
  return (
    <section aria-labelledby="record-title">
      <p class="crumbs">
        <a href={`/admin/e/${entity.plural}`}>{entity.label}</a>
      </p>
      <div class="heading">
        <h1 id="record-title">
          {recordTitle(entity, record)}
          {record.archivedAt && <span class="badge">Archived</span>}
        </h1>
        <div class="actions">
          {canEdit && (
            <a class="button primary" href={`/admin/e/${entity.plural}/${record.id}/edit`}>
              Edit
            </a>
          )}
          {entity.plural === 'scheduledJobs' && isAdmin(session.me) && (
            <>
              <button
                type="button"
                onClick={() =>
                  void act('Started.', async () => {
                    const execution = await api<RecordDoc>('POST', `${base}/run`);
                    setStarted(execution.id);
                    return undefined;
                  })
                }
              >
                Run now
              </button>
              <a class="button" href={`/admin/e/jobExecutions?jobId=${record.id}`}>
                Executions
              </a>
            </>
          )}
          {(entity.versioning !== 'none' || entity.fields.some((f) => f.trackChanges)) && (
            <a class="button" href={`/admin/e/${entity.plural}/${record.id}/history`}>
              History
            </a>
          )}
          {canEdit && entity.ownership === 'owned' && (
            <button
              type="button"
              onClick={() =>
                void act(record.archivedAt ? 'Restored.' : 'Archived.', () =>
                  api<RecordDoc>('POST', `${base}/${record.archivedAt ? 'restore' : 'archive'}`),
                )
              }
            >
              {record.archivedAt ? 'Restore' : 'Archive'}
            </button>
          )}
          {canDelete && (
            <button
              type="button"
              class="danger"
              onClick={() => {
                if (!confirm(`Delete ${recordTitle(entity, record)}? This cannot be undone.`)) return;
                void act('Deleted.', async () => {
                  await api('DELETE', base);
                  route(`/admin/e/${entity.plural}`);
                  return undefined;
                });
              }}
            >
              Delete
            </button>
          )}
        </div>
      </div>
      <p role="status" class="muted">
        {status}
        {started && (
          <>
            {' '}
            <a href={`/admin/e/jobExecutions/${started}`}>See the execution</a>
          </>
        )}
      </p>
      {failure !== undefined && <Problem error={failure} />}
      {!record.archivedAt && !record.trashedAt && (
        <EndpointActions session={session} entity={entity} record={record} onRecord={setRecord} />
      )}
      {entity.plural === 'mediaAssets' &&
        typeof record.mimeType === 'string' &&
        record.mimeType.startsWith('image/') && (
          <figure class="preview">
            <img
              src={`/api/v1/mediaAssets/${record.id}/file`}
              alt={typeof record.altText === 'string' ? record.altText : ''}
            />
            <figcaption class="muted">{String(record.filename)}</figcaption>
          </figure>
        )}
      <dl class="record">
        {onRecord(entity, record, session.me.user.id).fields.map((field) => (
          <div key={field.name}>
            <dt>{field.label}</dt>
            <dd>
              {field.ref && record[field.name] !== null && record[field.name] !== undefined ? (
                <RefValue session={session} plural={field.ref} value={record[field.name]} />
              ) : (
                <span class={['object', 'any'].includes(field.type) ? 'code' : undefined}>
                  {formatValue(field, record[field.name]) || <span class="muted">—</span>}
                </span>
              )}
              {canEdit && numeric.includes(field) && !record.archivedAt && (
                <span class="increment">
                  {[-1, 1].map((by) => (
                    <button
                      key={by}
                      type="button"
                      aria-label={`${by > 0 ? 'Increase' : 'Decrease'} ${field.label} by 1`}
                      onClick={() =>
                        void act(`${field.label} ${by > 0 ? 'increased' : 'decreased'}.`, () =>
                          api<RecordDoc>('PATCH', `${base}/increment`, { body: { [field.name]: by } }),
                        )
                      }
                    >
                      {by > 0 ? '+1' : '−1'}
                    </button>
                  ))}
                </span>
              )}
            </dd>
          </div>
        ))}
      </dl>
      <RelatedRecords session={session} entity={entity} id={record.id} />
      {entity.plural === 'scheduledJobs' && <JobMetrics jobId={record.id} />}
    </section>
  );
}
