import { API_KEYS_CREATE, API_KEYS_DELETE, API_KEYS_VIEW } from '../access/accountPermissions.js';
import { ACCESS_ERRORS, INPUT_ERRORS, route } from './route.js';
import { Body, Data, Enum, NonBlank, Nullable, Strings, SuccessMessage, Text, Type } from './schemas.js';

// /api/v1/users, /api/v1/roles and /api/v1/apikeys: the accounts, roles and keys administrators keep.

const INPUT = INPUT_ERRORS;
const ADMIN = ACCESS_ERRORS;
const AUTH_SOURCE = Enum(['local', 'ldap']);
const ROLE_KEYS = Strings(50, 64);
const PERMISSIONS = Strings(1000, 300);

export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  displayName: Type.String(),
  roles: Type.Array(Type.String()),
  authSource: Enum(['local', 'ldap']),
  ldapDn: Nullable(Type.String()),
  disabled: Type.Boolean(),
  mfaEnabled: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  lastLoginAt: Nullable(Type.String()),
});

export const Role = Type.Object({
  id: Type.String(),
  key: Type.String(),
  label: Type.String(),
  description: Type.Optional(Nullable(Type.String())),
  isSystem: Type.Optional(Type.Boolean()),
  isBuiltin: Type.Optional(Type.Boolean()),
  origin: Type.Optional(Enum(['builtin', 'file', 'stored'])),
  permissions: Type.Array(Type.String()),
});

export const AvailablePermission = Type.Object({
  key: Type.String(),
  entity: Type.String(),
  action: Type.String(),
  scope: Type.Optional(Type.String()),
  label: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
});

export const ApiKeyInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  permissions: Type.Array(Type.String()),
  expiresAt: Type.String(),
  lastEight: Type.String(),
  createdAt: Type.Optional(Type.String()),
  lastUsedAt: Type.Optional(Nullable(Type.String())),
  mcp: Type.Optional(Type.Boolean({ description: 'false: the key cannot use the MCP server' })),
});

export const CreatedApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  token: Type.String(),
  lastEight: Type.String(),
  expiresAt: Type.String(),
  permissions: Type.Optional(Type.Array(Type.String())),
  mcp: Type.Optional(Type.Boolean()),
});

const users = { tag: 'users' } as const;

export const listUsers = route({
  ...users,
  method: 'GET',
  path: '/api/v1/users',
  operationId: 'users_list',
  access: 'admin',
  summary: 'Users (admin)',
  query: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      cursor: Type.Optional(Text(200)),
      q: Type.Optional(Text(100, { description: 'Accounts whose email or display name contains this text' })),
      id: Type.Optional(
        Text(2500, { description: 'Only these accounts: up to 100 ids, comma-separated (to label references)' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: Type.Object({ items: Type.Array(UserView), nextCursor: Type.Optional(Type.String()) }),
  errors: [...ADMIN, 'VALIDATION_ERROR'],
  client: { group: 'users', name: 'list' },
});

export const createUser = route({
  ...users,
  method: 'POST',
  path: '/api/v1/users',
  operationId: 'users_create',
  access: 'admin',
  summary: 'Create an account (admin); a local account without a password is mailed the password-reset link to set one',
  status: 201,
  body: Body({
    email: Text(320),
    displayName: NonBlank(200),
    roles: Type.Optional(ROLE_KEYS),
    authSource: Type.Optional(AUTH_SOURCE),
    ldapDn: Type.Optional(NonBlank(1000)),
    password: Type.Optional(Text(1024)),
  }),
  response: UserView,
  errors: [...ADMIN, ...INPUT, 'CONFLICT'],
  client: { group: 'users', name: 'create' },
});

export const sendPasswordReset = route({
  ...users,
  method: 'POST',
  path: '/api/v1/users/{id}/password-reset',
  operationId: 'users_sendPasswordReset',
  access: 'admin',
  summary: "Mail the account's owner a password-reset link (admin; local accounts)",
  status: 202,
  response: SuccessMessage,
  errors: [...ADMIN, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
  client: { group: 'users', name: 'sendPasswordReset' },
});

export const updateUser = route({
  ...users,
  method: 'PUT',
  path: '/api/v1/users/{id}',
  operationId: 'users_update',
  // Yourself for displayName; an administrator for the rest (checked by the operation).
  access: 'signedIn',
  summary: 'Change a user: own displayName; roles, disabled and the sign-in source (authSource, ldapDn) by an admin',
  body: Body({
    displayName: Type.Optional(NonBlank(200)),
    roles: Type.Optional(ROLE_KEYS),
    disabled: Type.Optional(Type.Boolean()),
    authSource: Type.Optional(AUTH_SOURCE),
    ldapDn: Type.Optional(NonBlank(1000)),
  }),
  response: UserView,
  errors: [...ADMIN, ...INPUT, 'NOT_FOUND', 'CONFLICT'],
  client: { group: 'users', name: 'update' },
});

export const resetUserMfa = route({
  ...users,
  method: 'POST',
  path: '/api/v1/users/{id}/mfa/reset',
  operationId: 'users_resetMfa',
  access: 'admin',
  summary:
    "Turn off a user's two-factor authentication (admin): the next sign-in needs the password alone, and the user is mailed",
  response: UserView,
  errors: [...ADMIN, 'NOT_FOUND'],
  client: { group: 'users', name: 'resetMfa' },
});

const roles = { tag: 'roles', access: 'admin' } as const;

export const listRoles = route({
  ...roles,
  method: 'GET',
  path: '/api/v1/roles',
  operationId: 'roles_list',
  summary: 'Every role, built-in and stored (admin)',
  response: Type.Object({ items: Type.Array(Role) }),
  errors: ADMIN,
  client: { group: 'roles', name: 'list' },
});

export const availablePermissions = route({
  ...roles,
  method: 'GET',
  path: '/api/v1/roles/available-permissions',
  operationId: 'roles_availablePermissions',
  summary: 'Every permission string the model understands (admin)',
  response: Type.Array(AvailablePermission),
  errors: ADMIN,
  client: { group: 'roles', name: 'availablePermissions' },
});

export const createRole = route({
  ...roles,
  method: 'POST',
  path: '/api/v1/roles',
  operationId: 'roles_create',
  summary: 'Create a role, or a stored override of a built-in one (admin)',
  body: Body({
    key: Text(64),
    label: NonBlank(200),
    description: Type.Optional(Nullable(Text(2000))),
    permissions: PERMISSIONS,
    isSystem: Type.Optional(Type.Boolean()),
  }),
  status: 201,
  response: Role,
  errors: [...ADMIN, ...INPUT, 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
  client: { group: 'roles', name: 'create' },
});

export const updateRole = route({
  ...roles,
  method: 'PUT',
  path: '/api/v1/roles/{key}',
  operationId: 'roles_update',
  summary: 'Change a role (admin)',
  body: Body({
    label: Type.Optional(NonBlank(200)),
    description: Type.Optional(Nullable(Text(2000))),
    permissions: Type.Optional(PERMISSIONS),
    isSystem: Type.Optional(Type.Boolean()),
  }),
  response: Role,
  errors: [...ADMIN, ...INPUT, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
  client: { group: 'roles', name: 'update' },
});

export const deleteRole = route({
  ...roles,
  method: 'DELETE',
  path: '/api/v1/roles/{key}',
  operationId: 'roles_delete',
  summary: 'Delete a stored role; a built-in falls back to its code definition (admin)',
  response: Type.Object({ key: Type.String(), deleted: Type.Literal(true) }),
  errors: [...ADMIN, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
  client: { group: 'roles', name: 'remove' },
});

const apiKeys = { tag: 'apikeys' } as const;

export const createApiKey = route({
  ...apiKeys,
  method: 'POST',
  path: '/api/v1/apikeys',
  operationId: 'apikeys_create',
  access: { permission: API_KEYS_CREATE },
  summary: 'Create an API key with a subset of your permissions; the token is shown only here',
  body: Body({
    name: NonBlank(200),
    permissions: Strings(500, 300),
    expiresAt: Text(64),
    mcp: Type.Optional(Type.Boolean({ description: 'false keeps the key off the MCP server (default true)' })),
  }),
  status: 201,
  response: Data(CreatedApiKey),
  errors: [...ADMIN, ...INPUT, 'UNPROCESSABLE_ENTITY'],
  client: { group: 'apiKeys', name: 'create', unwrap: true, doc: 'The token is in this answer only.' },
});

export const listApiKeys = route({
  ...apiKeys,
  method: 'GET',
  path: '/api/v1/apikeys',
  operationId: 'apikeys_list',
  access: { permission: API_KEYS_VIEW },
  summary: 'Your live API keys (masked)',
  response: Data(Type.Object({ items: Type.Array(ApiKeyInfo) })),
  errors: ADMIN,
  client: { group: 'apiKeys', name: 'list', unwrap: true },
});

export const revokeApiKey = route({
  ...apiKeys,
  method: 'DELETE',
  path: '/api/v1/apikeys/{id}',
  operationId: 'apikeys_revoke',
  access: { permission: API_KEYS_DELETE },
  summary: 'Revoke an API key',
  response: Data(Type.Object({ id: Type.String(), revoked: Type.Literal(true) })),
  errors: [...ADMIN, 'NOT_FOUND'],
  client: { group: 'apiKeys', name: 'revoke', unwrap: true },
});
