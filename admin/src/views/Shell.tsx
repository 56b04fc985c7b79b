import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { DocsLink } from '../docsLink.js';
import type { EntityMeta } from '../model.js';
import { can, isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { applyTheme, savedTheme, type Theme } from '../theme.js';

const GROUPS: { label: string; test: (origin: string) => boolean }[] = [
  { label: 'Application', test: (origin) => origin === 'app' },
  { label: 'Features', test: (origin) => origin.startsWith('feature') },
  { label: 'Built-in', test: (origin) => origin === 'builtin' },
];

/** The entities the caller may view, grouped by where they come from. */
export function navigationGroups(session: Session): { label: string; entities: EntityMeta[] }[] {
  const visible = session.entities.filter((e) => can(session.me, e.plural, 'view'));
  return GROUPS.map((group) => ({
    label: group.label,
    entities: visible.filter((e) => group.test(e.origin)).sort((a, b) => a.label.localeCompare(b.label)),
  })).filter((group) => group.entities.length > 0);
}

/** The console's own pages the caller may use: `[path, label]`. */
export function operationPages(session: Session): [string, string][] {
  const admin = isAdmin(session.me);
  const pages: [string, string, boolean][] = [
    ['/admin/approvals', 'Approvals', admin && session.entities.some((e) => e.fields.some((f) => f.trackChanges))],
    ['/admin/users', 'Users', admin],
    ['/admin/roles', 'Roles', admin],
    ['/admin/apikeys', 'API keys', admin || session.me.permissions.includes('apiKeys:view')],
    ['/admin/health', 'Health', admin],
  ];
  return pages.filter(([, , allowed]) => allowed).map(([href, label]) => [href, label]);
}

export function Shell({ session, children }: { session: Session; children: ComponentChildren }) {
  const { path } = useLocation();
  const [theme, setTheme] = useState<Theme>(savedTheme());
  const [menuOpen, setMenuOpen] = useState(false);
  const groups = navigationGroups(session);
  const operations = operationPages(session);
  const pick = (next: Theme) => {
    applyTheme(next);
    setTheme(next);
  };
  return (
    <div class={`shell${menuOpen ? ' menu-open' : ''}`}>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="topbar">
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="navigation"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <a href="/admin" class="brand">
          Admin console
        </a>
        <span class="spacer" />
        {(session.me.tenants?.length ?? 0) > 0 && (
          <label class="inline">
            <span class="visually-hidden">Tenant</span>
            <select
              aria-label="Tenant"
              value={session.tenant ?? ''}
              onChange={(e) => session.pickTenant(e.currentTarget.value || undefined)}
            >
              <option value="">All my tenants</option>
              {[...session.me.tenants!]
                .sort((a, b) => (a.label ?? a.id).localeCompare(b.label ?? b.id))
                .map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.label ?? t.id}
                  </option>
                ))}
            </select>
          </label>
        )}
        <label class="inline">
          <span class="visually-hidden">Theme</span>
          <select value={theme} onChange={(e) => pick(e.currentTarget.value as Theme)} aria-label="Theme">
            <option value="system">System theme</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>
        <DocsLink page="guide/admin-console">Docs</DocsLink>
        <span class="who" title={session.me.user.email}>
          {session.me.user.displayName}
        </span>
        <button type="button" onClick={() => void session.signOut()}>
          Sign out
        </button>
      </header>
      <nav id="navigation" aria-label="Entities">
        {operations.length > 0 && (
          <section>
            <h2>Operations</h2>
            <ul>
              {operations.map(([href, label]) => (
                <li key={href}>
                  <a href={href} aria-current={path === href ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </section>
        )}
        {groups.map((group) => (
          <section key={group.label}>
            <h2>{group.label}</h2>
            <ul>
              {group.entities.map((entity) => {
                const href = `/admin/e/${entity.plural}`;
                const current = path === href || path.startsWith(`${href}/`);
                return (
                  <li key={entity.plural}>
                    <a href={href} aria-current={current ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                      {entity.label}
                    </a>
                  </li>
                );
              })}
            </ul>
          </section>
        ))}
      </nav>
      <main id="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
