import type { AppModel } from '../model/types.js';
import * as accounts from './accounts.js';
import * as auth from './auth.js';
import * as features from './features.js';
import * as metadata from './metadata.js';
import * as pages from './pages.js';
import type { AnyRoute } from './route.js';

// Every route of the runtime's own API, in the order the document lists them. The entity routes
// come from the entity files (runtime/model/entityRoutes.ts).

export { accounts, auth, features, metadata, pages };

const isRoute = (value: unknown): value is AnyRoute =>
  typeof value === 'object' && value !== null && 'operationId' in value && 'method' in value;

const isShape = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !isRoute(value) && ('type' in value || 'anyOf' in value);

/** The shapes the declarations name (`Session`, `UserView`), by schema: the typed client declares them by these names. */
export const NAMED_SHAPES: ReadonlyMap<object, string> = new Map(
  [pages, auth, accounts, metadata, features]
    .flatMap((module) =>
      Object.entries(module).flatMap(([name, value]) => (isShape(value) ? [[value, name] as const] : [])),
    )
    .sort(([, a], [, b]) => a.localeCompare(b)),
);

/** Every declaration, whatever the app. */
// By path and method: a module's exports come in an order the loader picks.
export const ALL_ROUTES: readonly AnyRoute[] = [pages, auth, accounts, metadata, features]
  .flatMap((module) => Object.values(module).filter(isRoute))
  .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));

/** The declarations of the routes this app has, with the parts that name its entities filled in. */
export function fixedRoutes(model: AppModel): AnyRoute[] {
  return ALL_ROUTES.filter((route) => route.when?.(model) ?? true).map((route) =>
    route.forModel ? { ...route, ...route.forModel(model) } : route,
  );
}
