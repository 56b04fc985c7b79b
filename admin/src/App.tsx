import { createContext, type JSX } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { ApiFailure, api, onUnauthorized, setTenant } from './api.js';
import { startLabels } from './labels.js';
import { asCallerMay, type EntityMeta, type Me } from './model.js';
import type { Session } from './session.js';
import { ApiKeys } from './views/ApiKeys.js';
import { Approvals } from './views/Approvals.js';
import { EntityList } from './views/EntityList.js';
import { ErrorBoundary } from './views/ErrorBoundary.js';
import { Health } from './views/Health.js';
import { History } from './views/History.js';
import { Home } from './views/Home.js';
import { Problem } from './views/Problem.js';
import { RecordForm } from './views/RecordForm.js';
import { RecordView } from './views/RecordView.js';
import { Roles } from './views/Roles.js';
import { Shell } from './views/Shell.js';
import { SignIn } from './views/SignIn.js';
import { Users } from './views/Users.js';

const TENANT_KEY = 'entigen-admin-tenant';

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [entities, setEntities] = useState<EntityMeta[] | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  const [tenant, setTenantState] = useState<string | undefined>(sessionStorage.getItem(TENANT_KEY) ?? undefined);

  const load = useCallback(async () => {
    try {
      const current = await api<Me>('GET', '/auth/me', { quiet401: true });
      // A remembered tenant the user no longer belongs to is forgotten.
      const remembered = sessionStorage.getItem(TENANT_KEY) ?? undefined;
      const kept = remembered && current.tenants?.some((t) => t.id === remembered) ? remembered : undefined;
      if (!kept) sessionStorage.removeItem(TENANT_KEY);
      setTenant(kept);
      setTenantState(kept);
      const schema = await api<{ entities: EntityMeta[] }>('GET', '/schema/metadata');
      const usable = asCallerMay(schema.entities);
      startLabels(current, usable);
      setEntities(usable);
      setMe(current);
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) setMe(null);
      else setFailure(error);
    }
  }, []);

  useEffect(() => {
    void load();
    return onUnauthorized(() => {
      setNotice('Your session has ended. Sign in again to continue.');
      setMe(null);
    });
  }, [load]);

  if (failure) return <Problem error={failure} title="The console could not start" />;
  if (me === undefined) return <p class="loading">Loading…</p>;
  if (me === null)
    return (
      <SignIn
        notice={notice}
        onSignedIn={() => {
          setNotice(undefined);
          void load();
        }}
      />
    );
  const session: Session = {
    me,
    entities: entities ?? [],
    entity: (plural) => entities?.find((e) => e.plural === plural),
    tenant,
    pickTenant: (id) => {
      if (id) sessionStorage.setItem(TENANT_KEY, id);
      else sessionStorage.removeItem(TENANT_KEY);
      setTenant(id);
      setTenantState(id);
      // Another tenant's records are others: their labels are asked for again.
      startLabels(me, entities ?? []);
    },
    signOut: async () => {
      try {
        await api('POST', '/auth/logout', { quiet401: true });
      } finally {
        setNotice('You are signed out.');
        setMe(null);
      }
    },
  };
  return (
    <LocationProvider>
      <Routes key={tenant ?? ''} session={session} />
    </LocationProvider>
  );
}

const SessionContext = createContext<Session | undefined>(undefined);

/**
 * A view as a route's component: one stable function per view (a new one per render would
 * remount the view, and lose its state, on every move), the session from context.
 */
function routed<P extends object>(View: (props: P & { session: Session }) => JSX.Element | null) {
  return function RoutedView(props: P) {
    // Keyed by the record it shows: another entity or record starts fresh, a new query does not.
    const { plural, id } = props as { plural?: string; id?: string };
    return <View key={`${plural}/${id}`} {...props} session={useContext(SessionContext)!} />;
  };
}
const HomePage = routed(Home);
const EntityListPage = routed<{ plural: string }>(EntityList);
const RecordFormPage = routed<{ plural: string; id?: string }>(RecordForm);
const RecordViewPage = routed<{ plural: string; id: string }>(RecordView);
const HistoryPage = routed<{ plural: string; id: string }>(History);
const ApprovalsPage = routed(Approvals);
const UsersPage = routed(Users);
const RolesPage = routed(Roles);
const ApiKeysPage = routed(ApiKeys);
const HealthPage = routed(Health);
const NotFoundPage = () => <Problem error={new Error('No page lives at this address.')} title="Not found" />;

function Routes({ session }: { session: Session }) {
  const { path } = useLocation();
  // Each move checks the session: one that ended (expired, revoked, signed out in another tab)
  // answers 401 here and the sign-in form says so, even where anonymous callers may read.
  useEffect(() => {
    api('GET', '/auth/me').catch(() => undefined);
  }, [path]);
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session}>
        <ErrorBoundary resetKey={path}>
          <Router>
            <Route path="/admin" component={HomePage} />
            <Route path="/admin/e/:plural" component={EntityListPage} />
            <Route path="/admin/e/:plural/new" component={RecordFormPage} />
            <Route path="/admin/approvals" component={ApprovalsPage} />
            <Route path="/admin/users" component={UsersPage} />
            <Route path="/admin/roles" component={RolesPage} />
            <Route path="/admin/apikeys" component={ApiKeysPage} />
            <Route path="/admin/health" component={HealthPage} />
            <Route path="/admin/e/:plural/:id/history" component={HistoryPage} />
            <Route path="/admin/e/:plural/:id/edit" component={RecordFormPage} />
            <Route path="/admin/e/:plural/:id" component={RecordViewPage} />
            <Route default component={NotFoundPage} />
          </Router>
        </ErrorBoundary>
      </Shell>
    </SessionContext.Provider>
  );
}
