/**
 * What every signed-in user may do to their own account. A session holds them implicitly; an
 * API key holds them only when it was created with them, so a key made to read articles cannot
 * list, mint or revoke keys or rename its owner.
 */
export const ACCOUNT_EDIT = 'account:edit';
export const API_KEYS_VIEW = 'apiKeys:view';
export const API_KEYS_CREATE = 'apiKeys:create';
export const API_KEYS_DELETE = 'apiKeys:delete';

export const ACCOUNT_PERMISSIONS: readonly string[] = [ACCOUNT_EDIT, API_KEYS_VIEW, API_KEYS_CREATE, API_KEYS_DELETE];
