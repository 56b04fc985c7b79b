import { type Caller, isAnonymous, type PublicUser } from '../context/caller.js';
import { ApiError } from '../errors/apiError.js';

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

/** The signed-in caller holding `permission` (admins hold all); 403 names what an API key lacks. */
export function requirePermission(caller: Caller, permission: string): PublicUser {
  const user = requireUser(caller);
  if (!caller.isAdmin && !caller.permissions.has(permission)) {
    throw new ApiError(
      'FORBIDDEN',
      caller.credential?.kind === 'apiKey'
        ? `This API key does not hold ${permission}`
        : `You do not hold ${permission}`,
    );
  }
  return user;
}
