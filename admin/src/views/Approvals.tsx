import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import type { ApprovalsQueue } from '../apiTypes.js';
import { isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { ChangeTable, decide, type FieldChange } from './FieldChanges.js';
import { NotAllowed, Problem } from './Problem.js';

type Queue = ApprovalsQueue;

/** /admin/approvals: pending changes of tracked fields across every entity (GET /field-changes). */
export function Approvals({ session }: { session: Session }) {
  const tracked = session.entities.filter((e) => e.fields.some((f) => f.trackChanges));
  const [entity, setEntity] = useState('');
  const [items, setItems] = useState<FieldChange[]>([]);
  const [page, setPage] = useState<Queue | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  const [status, setStatus] = useState('');
  const [reload, setReload] = useState(0);
  const load = async (cursor?: string) => {
    try {
      const next = await api<Queue>(
        'GET',
        `/field-changes${query({ approvalStatus: 'pending', entity, limit: 50, cursor })}`,
      );
      setItems(cursor ? [...items, ...next.items] : next.items);
      setPage(next);
      setFailure(undefined);
    } catch (error) {
      setFailure(error);
    }
  };
  useEffect(() => {
    if (isAdmin(session.me)) void load();
  }, [entity, reload]);
  if (!isAdmin(session.me)) return <NotAllowed what="decide on changes of tracked fields (administrators only)" />;
  const act = async (change: FieldChange, decision: 'approved' | 'rejected') => {
    try {
      await decide(session, change, change.entity!, decision);
      setStatus(`${decision === 'approved' ? 'Approved' : 'Rejected'} the change of ${change.fieldName}.`);
      setReload(reload + 1);
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Pending approvals {page && <span class="muted">({page.total})</span>}</h1>
      <label class="inline">
        Entity
        <select value={entity} onChange={(e) => setEntity(e.currentTarget.value)}>
          <option value="">All</option>
          {tracked.map((e) => (
            <option key={e.plural} value={e.plural}>
              {e.label}
            </option>
          ))}
        </select>
      </label>
      <p role="status" class="muted">
        {status}
      </p>
      {failure !== undefined && <Problem error={failure} />}
      <ChangeTable
        session={session}
        changes={items}
        entityOf={(change) => session.entity(change.entity ?? '')}
        onDecide={(change, decision) => void act(change, decision)}
      />
      {page?.hasMore && (
        <button type="button" onClick={() => void load(page.nextCursor)}>
          Load more
        </button>
      )}
    </section>
  );
}
