import { useLabel } from '../labels.js';
import { USERS } from '../model.js';
import { can, isAdmin } from '../permissions.js';
import type { Session } from '../session.js';

/**
 * A reference as the console shows it: the referenced record's label, linked to its page (an
 * account: to the users page, for administrators). The id stays in the tooltip; a record the
 * caller may not see shows its id, unlinked.
 */
export function RefLink({ session, plural, id }: { session: Session; plural: string; id: string }) {
  const label = useLabel(plural, id);
  const href =
    plural === USERS
      ? isAdmin(session.me)
        ? `/admin/users?id=${encodeURIComponent(id)}`
        : undefined
      : session.entity(plural) && can(session.me, plural, 'view')
        ? `/admin/e/${plural}/${encodeURIComponent(id)}`
        : undefined;
  const shown = plural === USERS && id === session.me.user.id ? `${label} (you)` : label;
  return href ? (
    <a href={href} title={id} class="ref">
      {shown}
    </a>
  ) : (
    <span title={id} class="ref">
      {shown}
    </span>
  );
}

/** A reference field's value: one RefLink, or one per id of a list of references. */
export function RefValue({ session, plural, value }: { session: Session; plural: string; value: unknown }) {
  const ids = (Array.isArray(value) ? value : [value]).filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return null;
  return (
    <>
      {ids.map((id, index) => (
        <span key={id}>
          {index > 0 && ', '}
          <RefLink session={session} plural={plural} id={id} />
        </span>
      ))}
    </>
  );
}
