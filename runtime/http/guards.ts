import { isAnonymous, type Caller, type PublicUser } from '../access/caller.js';
import { ApiError } from './errors.js';

/** The signed-in user, or 401. */
export function requireUser(caller: Caller): PublicUser {
  if (isAnonymous(caller)) throw new ApiError('UNAUTHORIZED');
  return caller.user!;
}

/** 401 when anonymous, 403 when signed in without system:admin. */
export function requireAdmin(caller: Caller): void {
  requireUser(caller);
  if (!caller.isAdmin) throw new ApiError('FORBIDDEN', 'Administrators only');
}
