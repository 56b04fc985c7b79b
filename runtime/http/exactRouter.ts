import { Router } from 'express';

/**
 * A router that matches paths in their exact case. Every policy of the pipeline (the auth
 * rate-limit tier, the no-store header, the idempotency scope, the enrollment gates) reads the
 * path as written; a router that also answered `/api/v1/Auth/login` would let a spelling the
 * policies do not know reach the route. Express's default matches without case.
 */
export function exactRouter(): Router {
  return Router({ caseSensitive: true });
}
