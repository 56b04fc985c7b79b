import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import type { FieldChange } from '../apiTypes.js';
import { formatValue } from '../fields/formatValue.js';
import type { EntityMeta } from '../model.js';
import { isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { Problem } from './Problem.js';

export type { FieldChange };

/** Approve or reject one pending change (admins); answers the decided change. */
export function decide(session: Session, change: FieldChange, plural: string, approvalStatus: 'approved' | 'rejected') {
  return api<FieldChange>('PUT', `/${plural}/${change.entityId}/field-changes/${change.id}`, {
    body: { approvalStatus, approvedBy: session.me.user.id },
  });
}

/** The changes of one record's tracked fields, newest first, with approve and reject for admins. */
export function FieldChanges({ session, entity, id }: { session: Session; entity: EntityMeta; id: string }) {
  const [changes, setChanges] = useState<FieldChange[] | undefined>(undefined);
  const [status, setStatus] = useState<string>('');
  const [failure, setFailure] = useState<unknown>(undefined);
  const [reload, setReload] = useState(0);
  useEffect(() => {
    api<{ items: FieldChange[] }>('GET', `/${entity.plural}/${id}/field-changes${query({ approvalStatus: status })}`)
      .then((answer) => setChanges(answer.items))
      .catch(setFailure);
  }, [entity.plural, id, status, reload]);
  const act = async (change: FieldChange, decision: 'approved' | 'rejected') => {
    try {
      await decide(session, change, entity.plural, decision);
      setReload(reload + 1);
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <section aria-labelledby="changes-title">
      <h2 id="changes-title">Tracked field changes</h2>
      <label class="inline">
        Approval
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">Any</option>
          <option value="pending">Pending</option>
          <option value="approved">Approved</option>
          <option value="rejected">Rejected</option>
        </select>
      </label>
      {failure !== undefined && <Problem error={failure} />}
      {changes && <ChangeTable session={session} changes={changes} entityOf={() => entity} onDecide={act} />}
    </section>
  );
}

export function ChangeTable({
  session,
  changes,
  entityOf,
  onDecide,
}: {
  session: Session;
  changes: FieldChange[];
  entityOf: (change: FieldChange) => EntityMeta | undefined;
  onDecide(change: FieldChange, decision: 'approved' | 'rejected'): void;
}) {
  if (changes.length === 0) return <p class="muted">No changes.</p>;
  const showEntity = changes.some((c) => c.entity);
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {showEntity && <th scope="col">Record</th>}
            <th scope="col">Field</th>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col">By</th>
            <th scope="col">When</th>
            <th scope="col">Approval</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((change) => {
            const entity = entityOf(change);
            const field = entity?.fields.find((f) => f.name === change.fieldName);
            return (
              <tr key={change.id}>
                {showEntity && (
                  <td>
                    <a href={`/admin/e/${change.entity}/${change.entityId}`}>
                      {entity?.label ?? change.entity} {change.entityId.slice(-6)}
                    </a>
                  </td>
                )}
                <td>{field?.label ?? change.fieldName}</td>
                <td>{formatValue(field, change.oldValue)}</td>
                <td>{formatValue(field, change.newValue)}</td>
                <td>
                  <code>{change.changedBy}</code>
                </td>
                <td>{new Date(change.createdAt).toLocaleString()}</td>
                <td>
                  {change.approvalStatus ?? '—'}
                  {change.approvalStatus === 'pending' && isAdmin(session.me) && (
                    <span class="actions">
                      <button type="button" class="small" onClick={() => onDecide(change, 'approved')}>
                        Approve
                      </button>
                      <button type="button" class="small danger" onClick={() => onDecide(change, 'rejected')}>
                        Reject
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
