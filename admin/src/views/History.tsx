import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import type { AuditLog, Version, VersionComparison } from '../apiTypes.js';
import { formatValue } from '../fields/formatValue.js';
import { type EntityMeta, type RecordDoc, recordTitle } from '../model.js';
import { can } from '../permissions.js';
import type { Session } from '../session.js';
import { FieldChanges } from './FieldChanges.js';
import { NotAllowed, Problem } from './Problem.js';

interface HistoryList<T> {
  items: T[];
  total: number;
  hasMore: boolean;
  nextCursor?: string;
}
type Comparison = VersionComparison;
type AuditEntry = AuditLog;

/** /admin/e/{plural}/{id}/history: versions with compare and revert, the audit log, tracked-field changes. */
export function History({ session, plural, id }: { session: Session; plural: string; id: string }) {
  const entity = session.entity(plural);
  const [record, setRecord] = useState<RecordDoc | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  useEffect(() => {
    if (entity)
      api<RecordDoc>('GET', `/${plural}/${encodeURIComponent(id)}`)
        .then(setRecord)
        .catch(setFailure);
  }, [plural, id]);
  if (!entity || !can(session.me, plural, 'view')) return <NotAllowed what={`view ${plural}`} />;
  if (failure) return <Problem error={failure} />;
  if (!record) return <p class="loading">Loading…</p>;
  const tracked = entity.fields.some((f) => f.trackChanges);
  return (
    <section aria-labelledby="history-title">
      <p class="crumbs">
        <a href={`/admin/e/${plural}`}>{entity.label}</a> ›{' '}
        <a href={`/admin/e/${plural}/${record.id}`}>{recordTitle(entity, record)}</a>
      </p>
      <h1 id="history-title">History of {recordTitle(entity, record)}</h1>
      {entity.versioning === 'full' && <Versions session={session} entity={entity} record={record} />}
      {entity.versioning === 'simple' && <Audit entity={entity} id={record.id} />}
      {tracked && <FieldChanges session={session} entity={entity} id={record.id} />}
      {entity.versioning === 'none' && !tracked && <p>This entity keeps no history.</p>}
    </section>
  );
}

function Versions({ session, entity, record }: { session: Session; entity: EntityMeta; record: RecordDoc }) {
  const base = `/${entity.plural}/${record.id}`;
  const [versions, setVersions] = useState<Version[]>([]);
  const [page, setPage] = useState<HistoryList<Version> | undefined>(undefined);
  const [picked, setPicked] = useState<number[]>([]);
  const [comparison, setComparison] = useState<Comparison | undefined>(undefined);
  const [reverting, setReverting] = useState<number | undefined>(undefined);
  const [reason, setReason] = useState('');
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  const [reload, setReload] = useState(0);
  const canRevert = can(session.me, entity.plural, 'edit') && !record.archivedAt;

  const load = async (cursor?: string) => {
    try {
      const next = await api<HistoryList<Version>>('GET', `${base}/versions${query({ limit: 25, cursor })}`);
      setVersions(cursor ? [...versions, ...next.items] : next.items);
      setPage(next);
    } catch (error) {
      setFailure(error);
    }
  };
  useEffect(() => {
    void load();
  }, [base, reload]);

  const toggle = (version: number, on: boolean) => {
    const next = on ? [...picked, version].slice(-2) : picked.filter((v) => v !== version);
    setPicked(next);
  };
  const compare = async () => {
    const [a, b] = [...picked].sort((x, y) => x - y);
    try {
      setComparison(await api<Comparison>('GET', `${base}/versions/compare${query({ a, b })}`));
    } catch (error) {
      setFailure(error);
    }
  };
  const revert = async (event: Event) => {
    event.preventDefault();
    try {
      const answer = await api<{ newVersion: number; revertedTo: number }>('POST', `${base}/revert/${reverting}`, {
        body: reason ? { changeReason: reason } : {},
      });
      setStatus(`Reverted to version ${answer.revertedTo}; that is now version ${answer.newVersion}.`);
      setReverting(undefined);
      setReason('');
      setComparison(undefined);
      setPicked([]);
      setReload(reload + 1);
    } catch (error) {
      setFailure(error);
    }
  };
  const latest = versions[0]?.version;
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions {page && <span class="muted">({page.total})</span>}</h2>
      <p role="status" class="muted">
        {status}
      </p>
      {failure !== undefined && <Problem error={failure} />}
      <div class="actions">
        <button type="button" disabled={picked.length !== 2} onClick={() => void compare()}>
          Compare selected
        </button>
        <span class="muted">Select two versions to compare them.</span>
      </div>
      <ol class="timeline">
        {versions.map((v) => (
          <li key={v.id}>
            <label class="check">
              <input
                type="checkbox"
                checked={picked.includes(v.version)}
                onChange={(e) => toggle(v.version, e.currentTarget.checked)}
              />
              <strong>Version {v.version}</strong>
            </label>{' '}
            <span class="badge">{v.changeType}</span> {new Date(v.createdAt).toLocaleString()} by{' '}
            <code>{v.changedBy}</code>
            {v.changedFields && v.changedFields.length > 0 && (
              <span class="muted"> · changed: {v.changedFields.join(', ')}</span>
            )}
            {v.changeReason && <p class="reason">“{v.changeReason}”</p>}
            {canRevert && v.version !== latest && (
              <button type="button" class="small" onClick={() => setReverting(v.version)}>
                Revert to version {v.version}
              </button>
            )}
            {reverting === v.version && (
              <form class="inline-form" onSubmit={revert}>
                <label>
                  Reason for the revert
                  <input value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} />
                </label>
                <button type="submit" class="primary">
                  Revert
                </button>
                <button type="button" onClick={() => setReverting(undefined)}>
                  Cancel
                </button>
              </form>
            )}
          </li>
        ))}
      </ol>
      {page?.hasMore && (
        <button type="button" onClick={() => void load(page.nextCursor)}>
          Load older versions
        </button>
      )}
      {comparison && (
        <section aria-labelledby="compare-title">
          <h3 id="compare-title">
            Version {comparison.versionA.version} and version {comparison.versionB.version}: {comparison.totalChanges}{' '}
            {comparison.totalChanges === 1 ? 'field differs' : 'fields differ'}
          </h3>
          <div class="table-wrap">
            <table class="compare">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Version {comparison.versionA.version}</th>
                  <th scope="col">Version {comparison.versionB.version}</th>
                </tr>
              </thead>
              <tbody>
                {comparison.changes.map((change) => {
                  const field = entity.fields.find((f) => f.name === change.field);
                  return (
                    <tr key={change.field} class={change.changed ? 'changed' : undefined}>
                      <th scope="row">
                        {field?.label ?? change.field}
                        {change.changed && <span class="badge">changed</span>}
                      </th>
                      <td>{formatValue(field, change.oldValue)}</td>
                      <td>{formatValue(field, change.newValue)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </section>
  );
}

function Audit({ entity, id }: { entity: EntityMeta; id: string }) {
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [page, setPage] = useState<HistoryList<AuditEntry> | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  const load = async (cursor?: string) => {
    try {
      const next = await api<HistoryList<AuditEntry>>(
        'GET',
        `/${entity.plural}/${id}/audit${query({ limit: 25, cursor })}`,
      );
      setEntries(cursor ? [...entries, ...next.items] : next.items);
      setPage(next);
    } catch (error) {
      setFailure(error);
    }
  };
  useEffect(() => {
    void load();
  }, [entity.plural, id]);
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log {page && <span class="muted">({page.total})</span>}</h2>
      {failure !== undefined && <Problem error={failure} />}
      <ol class="timeline">
        {entries.map((entry) => (
          <li key={entry.id}>
            <span class="badge">{entry.changeType}</span> {new Date(entry.createdAt).toLocaleString()} by{' '}
            <code>{entry.changedBy}</code>
            {entry.changedFields && entry.changedFields.length > 0 && (
              <span class="muted"> · changed: {entry.changedFields.join(', ')}</span>
            )}
            {entry.changeReason && <p class="reason">“{entry.changeReason}”</p>}
          </li>
        ))}
      </ol>
      {page?.hasMore && (
        <button type="button" onClick={() => void load(page.nextCursor)}>
          Load older entries
        </button>
      )}
    </section>
  );
}
