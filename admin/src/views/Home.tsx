import type { Session } from '../session.js';
import { navigationGroups } from './Shell.js';

export function Home({ session }: { session: Session }) {
  const groups = navigationGroups(session);
  return (
    <section>
      <h1>Welcome, {session.me.user.displayName}</h1>
      <p class="muted">
        Signed in as {session.me.user.email} ({session.me.roles.join(', ') || 'no roles'}).
      </p>
      {groups.length === 0 ? (
        <p>Your roles let you view no entities. Ask an administrator for access.</p>
      ) : (
        groups.map((group) => (
          <section key={group.label}>
            <h2>{group.label}</h2>
            <ul class="cards">
              {group.entities.map((entity) => (
                <li key={entity.plural}>
                  <a href={`/admin/e/${entity.plural}`}>{entity.label}</a>
                  {entity.description && <p class="muted">{entity.description}</p>}
                </li>
              ))}
            </ul>
          </section>
        ))
      )}
    </section>
  );
}
