import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { type EntityMeta, type ListPage, recordTitle } from '../model.js';
import { can } from '../permissions.js';
import type { Session } from '../session.js';

/** Records a relation shows on a record page (the newest first); the rest are one link away. */
const SHOWN = 10;

type Relation = EntityMeta['relations'][number];

/**
 * A record page's reverse relations (an article's comments): for each the caller may view, the
 * newest records referencing this one, each by its label and linked, with how many there are
 * and a link to all of them in their list where that list filters by the reference.
 */
export function RelatedRecords({ session, entity, id }: { session: Session; entity: EntityMeta; id: string }) {
  const relations = entity.relations.filter((r) => session.entity(r.entity) && can(session.me, r.entity, 'view'));
  if (relations.length === 0) return null;
  return (
    <section class="related" aria-labelledby="related-title">
      <h2 id="related-title">Related</h2>
      {relations.map((relation) => (
        <RelationOf
          key={relation.name}
          session={session}
          entity={entity}
          relation={relation}
          target={session.entity(relation.entity)!}
          id={id}
        />
      ))}
    </section>
  );
}

function RelationOf({
  entity,
  relation,
  target,
  id,
}: {
  session: Session;
  entity: EntityMeta;
  relation: Relation;
  target: EntityMeta;
  id: string;
}) {
  const [page, setPage] = useState<ListPage | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  useEffect(() => {
    api<ListPage>('GET', `/${entity.plural}/${encodeURIComponent(id)}/${relation.name}${query({ limit: SHOWN })}`)
      .then(setPage)
      .catch((error: Error) => setFailure(error.message));
  }, [entity.plural, id, relation.name]);
  const headingId = `relation-${relation.name}`;
  const total = page?.totalCount ?? page?.items.length ?? 0;
  // The related list filtered by this record, where that entity filters by the reference.
  const all = target.filters.includes(relation.field)
    ? `/admin/e/${target.plural}${query({ [relation.field]: id })}`
    : undefined;
  return (
    <section class="relation" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {relation.label} {page && <span class="muted">({total})</span>}
      </h3>
      {relation.description && <p class="muted">{relation.description}</p>}
      {failure && <p class="field-error">{failure}</p>}
      {!page && !failure && <p class="loading">Loading…</p>}
      {page && page.items.length === 0 && <p class="muted">None yet.</p>}
      {page && page.items.length > 0 && (
        <ul>
          {page.items.map((record) => (
            <li key={record.id}>
              <a href={`/admin/e/${target.plural}/${record.id}`}>{recordTitle(target, record)}</a>
            </li>
          ))}
        </ul>
      )}
      {page && all && total > 0 && (
        <p>
          <a href={all}>
            {total > page.items.length ? `All ${total} ${target.label.toLowerCase()}` : `Open in ${target.label}`}
          </a>
        </p>
      )}
    </section>
  );
}
