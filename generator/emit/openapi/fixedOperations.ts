import type { ErrorCode } from '../../../runtime/errors/apiError.js';
import { MEDIA_ASSETS, SCHEDULED_JOBS } from '../../../runtime/model/collections.js';
import { entityRouteTable } from '../../../runtime/model/entityRoutes.js';
import type { AppModel } from '../../../runtime/model/types.js';
import type { JsonSchema } from '../../model/valueSchema.js';

/** One operation of the document, before it becomes an OpenAPI operation object. */
export interface Operation {
  method: string;
  /** OpenAPI form, `{id}` */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** none: no credential is read; required: a credential must be present; default: optional. */
  security?: 'none' | 'required';
  query?: JsonSchema[];
  body?: JsonSchema;
  bodyType?: 'json' | 'form' | 'multipart';
  bodyOptional?: boolean;
  status?: number;
  response?: JsonSchema;
  responseType?: 'json' | 'html' | 'binary' | 'text' | 'event-stream';
  responseDescription?: string;
  errors: ErrorCode[];
  /** Takes x-tenant-id (operations on tenant-scoped entities). */
  tenantScoped?: boolean;
  /** Responses beyond the success and the error codes, by status. */
  responses?: Record<string, JsonSchema>;
}

const str = { type: 'string' };
const strings = { type: 'array', items: str };
const object = (
  properties: Record<string, JsonSchema>,
  required: string[] = Object.keys(properties),
  extra: JsonSchema = {},
) => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});
const body = (properties: Record<string, JsonSchema>, required: string[]) =>
  object(properties, required, { additionalProperties: false });
const publicUser = object(
  { id: str, email: str, displayName: str, emailVerified: { type: 'boolean' }, mfaEnabled: { type: 'boolean' } },
  ['id', 'email', 'displayName'],
);
const session = object({ user: publicUser, token: str });
const success = object({ success: { type: 'boolean' } });
const userView = object(
  {
    id: str,
    email: str,
    displayName: str,
    roles: strings,
    authSource: str,
    ldapDn: { type: ['string', 'null'] },
    disabled: { type: 'boolean' },
    mfaEnabled: { type: 'boolean' },
    createdAt: str,
    updatedAt: str,
    lastLoginAt: { type: ['string', 'null'] },
  },
  ['id', 'email', 'displayName', 'roles'],
);
const mfaChallenge = object({
  mfaRequired: { const: true },
  mfaToken: str,
  expiresAt: str,
  methods: strings,
});
const mailTest = object({
  ok: { type: 'boolean' },
  transport: { enum: ['smtp', 'log'] },
  to: str,
  message: str,
});
const role = object(
  {
    id: str,
    key: str,
    label: str,
    description: { type: ['string', 'null'] },
    isSystem: { type: 'boolean' },
    isBuiltin: { type: 'boolean' },
    origin: { enum: ['builtin', 'file', 'stored'] },
    permissions: strings,
  },
  ['id', 'key', 'label', 'permissions'],
);
const apiKey = object(
  {
    id: str,
    name: str,
    permissions: strings,
    expiresAt: str,
    lastEight: str,
    createdAt: str,
    lastUsedAt: { type: ['string', 'null'] },
  },
  ['id', 'name', 'permissions', 'expiresAt', 'lastEight'],
);
const health = object({ status: { enum: ['ok', 'error'] }, timestamp: str });
const data = (schema: JsonSchema) => object({ data: schema });
const INPUT: ErrorCode[] = ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE'];
const ADMIN: ErrorCode[] = ['UNAUTHORIZED', 'FORBIDDEN'];

/** The routes the runtime defines by hand: auth, users, roles, API keys, schema, jobs, health, setup, docs, search. */
export function fixedOperations(model: AppModel): Operation[] {
  const ops: Operation[] = [
    {
      method: 'GET',
      path: '/api/health',
      operationId: 'health',
      tag: 'health',
      summary:
        'Health: status and timestamp; an admin also sees uptime, requests, memory, services, the database, and events (log size, open realtime streams, each webhook’s oldest undelivered event)',
      response: health,
      responseDescription: 'Healthy',
      errors: [],
      responses: {
        '503': { description: 'The database is unreachable', content: { 'application/json': { schema: health } } },
      },
    },
    {
      method: 'GET',
      path: '/api/metrics',
      operationId: 'metrics',
      tag: 'health',
      summary:
        'Prometheus metrics (text format): requests, latency, store calls, rate-limit refusals, idempotency replays, job runs, process; for the metrics token or an administrator',
      response: str,
      responseType: 'text',
      errors: ['UNAUTHORIZED', 'FORBIDDEN'],
    },
    {
      method: 'GET',
      path: '/',
      operationId: 'home_page',
      tag: 'auth',
      security: 'none',
      summary: 'The page a finished setup lands on: links to the API reference, the OpenAPI document and health',
      response: str,
      responseType: 'html',
      errors: [],
    },
    {
      method: 'GET',
      path: '/setup',
      operationId: 'setup_page',
      tag: 'auth',
      security: 'none',
      summary: 'First-run page that creates the administrator (404 once one exists)',
      response: str,
      responseType: 'html',
      errors: ['NOT_FOUND'],
    },
    {
      method: 'POST',
      path: '/setup',
      operationId: 'setup_submit',
      tag: 'auth',
      security: 'none',
      summary: 'Create the first administrator (form or JSON); 303 to / for a form',
      body: object({ name: str, email: str, password: str, tenantName: str }, ['email', 'password']),
      bodyType: 'form',
      status: 201,
      response: session,
      errors: [...INPUT, 'NOT_FOUND', 'CONFLICT'],
      responses: { '303': { description: 'A submitted form: signed in, redirected to /' } },
    },
    {
      method: 'POST',
      path: '/setup/test-mail',
      operationId: 'setup_testMail',
      tag: 'auth',
      security: 'none',
      summary:
        'Before setup: send a test mail to the email of the setup form and report the mail server’s answer (the form page again, or JSON); 404 once an admin exists',
      body: object({ email: str, name: str, tenantName: str }, ['email']),
      bodyType: 'form',
      response: mailTest,
      errors: [...INPUT, 'NOT_FOUND'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/register',
      operationId: 'auth_register',
      tag: 'auth',
      security: 'none',
      summary: 'Create an account and sign in (sets the session cookie)',
      body: body({ email: str, password: str, displayName: str }, ['email', 'password', 'displayName']),
      status: 201,
      response: session,
      errors: [...INPUT, 'CONFLICT'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/login',
      operationId: 'auth_login',
      tag: 'auth',
      security: 'none',
      summary: 'Sign in with a password or through LDAP (sets the session cookie)',
      body: body(
        {
          authType: { enum: ['password', 'ldap'] },
          email: str,
          password: str,
          ldapConfig: body({ url: str, baseDN: str, userFilter: str }, []),
        },
        ['email', 'password'],
      ),
      response: session,
      errors: [...INPUT, 'UNAUTHORIZED', 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
      responses: {
        '202': {
          description:
            'Two-factor authentication is on for this account: no session yet; POST /api/v1/auth/mfa/verify with the mfaToken and a code',
          content: { 'application/json': { schema: mfaChallenge } },
        },
      },
    },
    ...mfaOperations(),
    ...oidcOperations(),
    {
      method: 'POST',
      path: '/api/v1/auth/logout',
      operationId: 'auth_logout',
      tag: 'auth',
      security: 'required',
      summary: 'End the session',
      response: success,
      errors: ['UNAUTHORIZED'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/change-password',
      operationId: 'auth_changePassword',
      tag: 'auth',
      security: 'required',
      summary: 'Change the password; ends every earlier session and returns a new token',
      body: body({ currentPassword: str, newPassword: str }, ['currentPassword', 'newPassword']),
      response: object({ success: { type: 'boolean' }, token: str }),
      errors: [...INPUT, ...ADMIN],
    },
    {
      method: 'GET',
      path: '/api/v1/auth/me',
      operationId: 'auth_me',
      tag: 'auth',
      security: 'required',
      summary: 'The signed-in user with roles and effective permissions',
      response: object(
        {
          user: object({ id: str, email: str, emailVerified: { type: 'boolean' }, mfaEnabled: { type: 'boolean' } }, [
            'id',
          ]),
          roles: strings,
          permissions: strings,
          mfaEnrollmentRequired: { type: 'boolean' },
          tenants: {
            type: 'array',
            description: 'With tenancy: the tenants the user is a member of (at most 200), for x-tenant-id',
            items: object({ id: str, label: { type: ['string', 'null'] } }),
          },
        },
        ['user', 'roles', 'permissions'],
      ),
      errors: ['UNAUTHORIZED'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/test-mail',
      operationId: 'auth_testMail',
      tag: 'auth',
      security: 'required',
      summary:
        'Send a test mail now (past the queue) to `to` or to yourself, and report what the mail server answered (admin)',
      body: body({ to: str }, []),
      bodyOptional: true,
      response: mailTest,
      errors: [...INPUT, ...ADMIN],
    },
    {
      method: 'GET',
      path: '/api/v1/auth/test-ldap',
      operationId: 'auth_testLdap',
      tag: 'auth',
      summary: 'Test the connection to the configured LDAP server',
      response: object({ ok: { type: 'boolean' }, url: { type: ['string', 'null'] }, message: str }, ['ok']),
      errors: ADMIN,
    },
    {
      method: 'POST',
      path: '/api/v1/auth/forgot-password',
      operationId: 'auth_forgotPassword',
      tag: 'auth',
      security: 'none',
      summary: 'Send a password-reset token (the answer does not reveal whether the account exists)',
      body: body({ email: str }, ['email']),
      status: 202,
      response: object({ success: { type: 'boolean' }, message: str }),
      errors: INPUT,
    },
    {
      method: 'POST',
      path: '/api/v1/auth/verify-email',
      operationId: 'auth_verifyEmail',
      tag: 'auth',
      security: 'none',
      summary: 'Confirm an address with the token mailed at registration or for a change of address',
      body: body({ token: str }, ['token']),
      response: object({ success: { type: 'boolean' }, user: publicUser }),
      errors: [...INPUT, 'CONFLICT'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/resend-verification',
      operationId: 'auth_resendVerification',
      tag: 'auth',
      security: 'none',
      summary: 'Mail a new verification link (the answer does not reveal whether the address is registered)',
      body: body({ email: str }, ['email']),
      status: 202,
      response: object({ success: { type: 'boolean' }, message: str }),
      errors: INPUT,
    },
    {
      method: 'POST',
      path: '/api/v1/auth/change-email',
      operationId: 'auth_changeEmail',
      tag: 'auth',
      security: 'required',
      summary: 'Ask to move the account to a new address: it changes once the link mailed there is used',
      body: body({ newEmail: str, currentPassword: str }, ['newEmail', 'currentPassword']),
      status: 202,
      response: object({ success: { type: 'boolean' }, message: str }),
      errors: [...INPUT, 'UNAUTHORIZED', 'FORBIDDEN', 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/reset-password',
      operationId: 'auth_resetPassword',
      tag: 'auth',
      security: 'none',
      summary: 'Set a new password with a reset token',
      body: body({ token: str, newPassword: str }, ['token', 'newPassword']),
      response: success,
      errors: [...INPUT, 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'GET',
      path: '/api/v1/users',
      operationId: 'users_list',
      tag: 'users',
      security: 'required',
      summary: 'Users (admin)',
      query: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200 } },
        { name: 'cursor', in: 'query', schema: str },
      ],
      response: object({ items: { type: 'array', items: userView }, nextCursor: str }, ['items']),
      errors: [...ADMIN, 'VALIDATION_ERROR'],
    },
    {
      method: 'POST',
      path: '/api/v1/users',
      operationId: 'users_create',
      tag: 'users',
      security: 'required',
      summary:
        'Create an account (admin); a local account without a password is mailed the password-reset link to set one',
      status: 201,
      body: body(
        {
          email: str,
          displayName: str,
          roles: strings,
          authSource: { enum: ['local', 'ldap'] },
          ldapDn: str,
          password: str,
        },
        ['email', 'displayName'],
      ),
      response: userView,
      errors: [...ADMIN, ...INPUT, 'CONFLICT'],
    },
    {
      method: 'POST',
      path: '/api/v1/users/{id}/password-reset',
      operationId: 'users_sendPasswordReset',
      tag: 'users',
      security: 'required',
      summary: "Mail the account's owner a password-reset link (admin; local accounts)",
      status: 202,
      response: object({ success: { type: 'boolean' }, message: str }),
      errors: [...ADMIN, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'PUT',
      path: '/api/v1/users/{id}',
      operationId: 'users_update',
      tag: 'users',
      security: 'required',
      summary:
        'Change a user: own displayName; roles, disabled and the sign-in source (authSource, ldapDn) by an admin',
      body: body(
        {
          displayName: str,
          roles: strings,
          disabled: { type: 'boolean' },
          authSource: { enum: ['local', 'ldap'] },
          ldapDn: str,
        },
        [],
      ),
      response: userView,
      errors: [...ADMIN, ...INPUT, 'NOT_FOUND', 'CONFLICT'],
    },
    {
      method: 'POST',
      path: '/api/v1/users/{id}/mfa/reset',
      operationId: 'users_resetMfa',
      tag: 'users',
      security: 'required',
      summary:
        'Turn off a user’s two-factor authentication (admin): the next sign-in needs the password alone, and the user is mailed',
      response: userView,
      errors: [...ADMIN, 'NOT_FOUND'],
    },
    {
      method: 'GET',
      path: '/api/v1/roles',
      operationId: 'roles_list',
      tag: 'roles',
      security: 'required',
      summary: 'Every role, built-in and stored (admin)',
      response: object({ items: { type: 'array', items: role } }),
      errors: ADMIN,
    },
    {
      method: 'GET',
      path: '/api/v1/roles/available-permissions',
      operationId: 'roles_availablePermissions',
      tag: 'roles',
      security: 'required',
      summary: 'Every permission string the model understands (admin)',
      response: {
        type: 'array',
        items: object({ key: str, entity: str, action: str, scope: str, label: str, description: str }, [
          'key',
          'entity',
          'action',
        ]),
      },
      errors: ADMIN,
    },
    {
      method: 'POST',
      path: '/api/v1/roles',
      operationId: 'roles_create',
      tag: 'roles',
      security: 'required',
      summary: 'Create a role, or a stored override of a built-in one (admin)',
      body: body({ key: str, label: str, description: str, permissions: strings, isSystem: { type: 'boolean' } }, [
        'key',
        'label',
        'permissions',
      ]),
      status: 201,
      response: role,
      errors: [...ADMIN, ...INPUT, 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'PUT',
      path: '/api/v1/roles/{key}',
      operationId: 'roles_update',
      tag: 'roles',
      security: 'required',
      summary: 'Change a role (admin)',
      body: body({ label: str, description: str, permissions: strings, isSystem: { type: 'boolean' } }, []),
      response: role,
      errors: [...ADMIN, ...INPUT, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'DELETE',
      path: '/api/v1/roles/{key}',
      operationId: 'roles_delete',
      tag: 'roles',
      security: 'required',
      summary: 'Delete a stored role; a built-in falls back to its code definition (admin)',
      response: object({ key: str, deleted: { const: true } }),
      errors: [...ADMIN, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'POST',
      path: '/api/v1/apikeys',
      operationId: 'apikeys_create',
      tag: 'apikeys',
      security: 'required',
      summary: 'Create an API key with a subset of your permissions; the token is shown only here',
      body: body({ name: str, permissions: strings, expiresAt: str }, ['name', 'permissions', 'expiresAt']),
      status: 201,
      response: data(
        object({ id: str, name: str, token: str, lastEight: str, expiresAt: str, permissions: strings }, [
          'id',
          'name',
          'token',
          'lastEight',
          'expiresAt',
        ]),
      ),
      errors: [...ADMIN, ...INPUT, 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'GET',
      path: '/api/v1/apikeys',
      operationId: 'apikeys_list',
      tag: 'apikeys',
      security: 'required',
      summary: 'Your live API keys (masked)',
      response: data(object({ items: { type: 'array', items: apiKey } })),
      errors: ADMIN,
    },
    {
      method: 'DELETE',
      path: '/api/v1/apikeys/{id}',
      operationId: 'apikeys_revoke',
      tag: 'apikeys',
      security: 'required',
      summary: 'Revoke an API key',
      response: data(object({ id: str, revoked: { const: true } })),
      errors: [...ADMIN, 'NOT_FOUND'],
    },
    {
      method: 'GET',
      path: '/api/v1/schema/metadata',
      operationId: 'schema_metadata',
      tag: 'schema',
      summary: 'Every entity with its fields',
      response: data(object({ entities: { type: 'array', items: { $ref: '#/components/schemas/EntityMetadata' } } })),
      errors: [],
    },
    {
      method: 'GET',
      path: '/api/v1/schema/metadata/list',
      operationId: 'schema_list',
      tag: 'schema',
      summary: 'Entity names',
      response: data(
        object({ items: { type: 'array', items: object({ name: str, plural: str, label: str, origin: str }) } }),
      ),
      errors: [],
    },
    {
      method: 'GET',
      path: '/api/v1/schema/metadata/{entity}',
      operationId: 'schema_entity',
      tag: 'schema',
      summary: 'One entity (by plural or name) with its fields',
      response: data({ $ref: '#/components/schemas/EntityMetadata' }),
      errors: ['NOT_FOUND'],
    },
    ...(model.entities.some((e) => !e.internal && e.fields.some((f) => f.trackChanges))
      ? [
          {
            method: 'GET',
            path: '/api/v1/field-changes',
            operationId: 'fieldChanges_queue',
            tag: 'history',
            security: 'required' as const,
            summary:
              'Changes of tracked fields across every entity, newest first (admin): the approvals queue; decide one with PUT /{plural}/{id}/field-changes/{changeId}',
            query: [
              { name: 'entity', in: 'query', schema: str },
              {
                name: 'approvalStatus',
                in: 'query',
                schema: { type: 'string', enum: ['pending', 'approved', 'rejected'] },
              },
              { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200 } },
              { name: 'cursor', in: 'query', schema: str },
            ],
            response: object(
              {
                items: {
                  type: 'array',
                  items: {
                    allOf: [{ $ref: '#/components/schemas/FieldChange' }, object({ entity: str })],
                  },
                },
                total: { type: 'integer' },
                hasMore: { type: 'boolean' },
                nextCursor: str,
              },
              ['items', 'total', 'hasMore'],
            ),
            errors: [...ADMIN, 'VALIDATION_ERROR'] as ErrorCode[],
          },
        ]
      : []),
    {
      method: 'GET',
      path: '/api/docs/openapi.json',
      operationId: 'docs_openapi',
      tag: 'schema',
      security: 'none',
      summary: 'This document',
      response: { type: 'object' },
      errors: [],
    },
    {
      method: 'GET',
      path: '/api/docs/assets/{file}',
      operationId: 'docs_asset',
      tag: 'schema',
      security: 'none',
      summary: 'Script and style of the reference page (served from swagger-ui-dist)',
      response: str,
      responseType: 'html',
      errors: ['NOT_FOUND'],
    },
    {
      method: 'GET',
      path: '/api/docs',
      operationId: 'docs_page',
      tag: 'schema',
      security: 'none',
      summary: 'API reference page',
      response: str,
      responseType: 'html',
      errors: [],
    },
    {
      method: 'GET',
      path: '/admin',
      operationId: 'admin_page',
      tag: 'schema',
      security: 'none',
      summary: 'The admin console (a single page that calls this API; docs/guide/admin-console.md)',
      response: str,
      responseType: 'html',
      errors: [],
    },
    {
      method: 'GET',
      path: '/docs',
      operationId: 'docs_site',
      tag: 'schema',
      security: 'none',
      summary: "entigen's documentation site, when it is built beside the package (npm run docs:build); 404 otherwise",
      response: str,
      responseType: 'html',
      errors: ['NOT_FOUND'],
    },
    {
      method: 'GET',
      path: '/docs/{path}',
      operationId: 'docs_site_page',
      tag: 'schema',
      security: 'none',
      summary: 'A page or asset of the documentation site (clean URLs: /docs/guide/deployment)',
      response: str,
      responseType: 'html',
      errors: ['NOT_FOUND'],
    },
    {
      method: 'GET',
      path: '/admin/assets/{file}',
      operationId: 'admin_asset',
      tag: 'schema',
      security: 'none',
      summary: "The admin console's script and stylesheet (content-hashed names, cached for a year)",
      response: str,
      responseType: 'html',
      errors: ['NOT_FOUND'],
    },
    {
      method: 'GET',
      path: '/admin/{path}',
      operationId: 'admin_route',
      tag: 'schema',
      security: 'none',
      summary: 'Any other path under /admin (and deeper): the console page, which routes in the browser',
      response: str,
      responseType: 'html',
      errors: [],
    },
  ];
  if (model.entities.some((e) => e.plural === SCHEDULED_JOBS && !e.internal)) {
    ops.push({
      method: 'POST',
      path: '/api/v1/scheduledJobs/{id}/run',
      operationId: 'scheduledJobs_run',
      tag: 'scheduledJobs',
      security: 'required',
      summary: 'Run a job now (admin); answers the started execution',
      status: 202,
      response: data({ $ref: '#/components/schemas/JobExecution' }),
      errors: [...ADMIN, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
    });
  }
  if (model.entities.some((e) => e.plural === MEDIA_ASSETS && !e.internal)) {
    ops.push(
      {
        method: 'POST',
        path: '/api/v1/mediaAssets/upload',
        operationId: 'mediaAssets_upload',
        tag: 'mediaAssets',
        security: 'required',
        summary:
          'Upload a file (multipart part `file`, optional altText, width, height, filename) into the upload folder and create its MediaAsset',
        body: object(
          {
            file: { type: 'string', contentMediaType: 'application/octet-stream' },
            altText: str,
            width: str,
            height: str,
            filename: str,
          },
          ['file'],
        ),
        bodyType: 'multipart',
        status: 201,
        response: data({ $ref: '#/components/schemas/MediaAsset' }),
        errors: [...ADMIN, ...INPUT, 'UNPROCESSABLE_ENTITY'],
      },
      {
        method: 'GET',
        path: '/api/v1/mediaAssets/{id}/file',
        operationId: 'mediaAssets_file',
        tag: 'mediaAssets',
        summary: 'The stored file of a media asset you may view',
        response: str,
        responseType: 'binary',
        errors: ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND'],
      },
    );
  }
  ops.push(realtimeOperation(model), ...webhookOperations());
  if (model.features.includes('search')) {
    ops.push({
      method: 'GET',
      path: '/api/v1/search',
      operationId: 'search',
      tag: 'search',
      summary: 'Search every entity you may view, ranked, with snippets',
      query: [
        {
          name: 'q',
          in: 'query',
          required: true,
          description: 'terms, each matched as a word prefix',
          schema: { type: 'string', minLength: 1, maxLength: 200 },
        },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
      ],
      response: data(
        object({
          items: { type: 'array', items: object({ entity: str, id: str, title: str, snippet: str }) },
          totalCount: { type: 'integer' },
        }),
      ),
      errors: ['VALIDATION_ERROR'],
    });
  }
  return ops;
}

/** GET /api/v1/realtime: Server-Sent Events of the entities that have a list. */
function realtimeOperation(model: AppModel): Operation {
  const subscribable = model.entities
    .filter((e) => entityRouteTable(e).some(([, , route]) => route === 'list'))
    .map((e) => e.plural);
  return {
    method: 'GET',
    path: '/api/v1/realtime',
    operationId: 'realtime',
    tag: 'realtime',
    summary:
      'Server-Sent Events: each change to the named entities that you could see in their lists at that moment, in log order; resume with Last-Event-ID',
    query: [
      {
        name: 'entities',
        in: 'query',
        required: true,
        description: `Entity plurals, comma-separated or repeated: ${subscribable.join(', ')}`,
        schema: { type: 'string', minLength: 1 },
      },
      {
        name: 'includeArchived',
        in: 'query',
        description: 'true: archived records stay in view (as with lists)',
        schema: { type: 'boolean', default: false },
      },
      {
        name: 'select',
        in: 'query',
        description: 'Fields to send besides id, comma-separated (default: every field GET shows)',
        schema: { type: 'string' },
      },
      {
        name: 'tenant',
        in: 'query',
        description: 'The tenant to narrow to, for clients that cannot send x-tenant-id (EventSource)',
        schema: { type: 'string', pattern: '^[0-9a-f]{24}$' },
      },
      {
        name: 'lastEventId',
        in: 'query',
        description: 'Resume after this event (the Last-Event-ID header wins)',
        schema: { type: 'integer', minimum: 0 },
      },
      {
        name: 'Last-Event-ID',
        in: 'header',
        description: 'Resume after this event: every later event you may see is sent first, in order',
        schema: { type: 'string', pattern: '^[0-9]+$' },
      },
    ],
    response: str,
    responseType: 'event-stream',
    responseDescription: [
      'A text/event-stream. Each event: `id:` the log sequence number, `event:` `<plural>.<created|updated|deleted|archived|restored|incremented|reverted>`,',
      '`data:` the record as GET shows it to you (for deletes `{ "id" }`). A record that leaves your view sends `<plural>.deleted` with',
      '`{ "id", "reason": "hidden" }` (an archive: `<plural>.archived` with `{ "id" }`). Comment lines are heartbeats. The event',
      '`stream.error` with `{ "error": { "code", "message" } }` ends the stream: EVENTS_EXPIRED (reload, then subscribe without',
      'Last-Event-ID), UNAUTHORIZED (the session ended or the key was revoked).',
    ].join(' '),
    errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMITED'],
    tenantScoped: true,
  };
}

/** Two-factor authentication (TOTP): enrollment and the second step of a sign-in. */
function mfaOperations(): Operation[] {
  const code = {
    type: ['string', 'integer'],
    maxLength: 64,
    description: 'Six digits from the authenticator app (a number counts as its six digits), or a recovery code',
  };
  const recoveryCode = { type: 'string', maxLength: 64, description: 'A recovery code (instead of `code`)' };
  return [
    {
      method: 'POST',
      path: '/api/v1/auth/mfa/enroll',
      operationId: 'auth_mfaEnroll',
      tag: 'auth',
      security: 'required',
      summary:
        'Start two-factor authentication: a new TOTP secret (shown only here) as an otpauth:// URI and a QR code (SVG data URL); confirm within 15 minutes. A session older than ten minutes gives the account’s password (`currentPassword`)',
      body: body({ currentPassword: str }, []),
      bodyOptional: true,
      response: object({ secret: str, otpauthUri: str, qrCode: str, expiresAt: str }),
      errors: [...INPUT, ...ADMIN, 'CONFLICT'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/mfa/confirm',
      operationId: 'auth_mfaConfirm',
      tag: 'auth',
      security: 'required',
      summary:
        'Turn two-factor authentication on with a current code; answers ten single-use recovery codes, shown once',
      body: body({ code }, ['code']),
      response: object({ success: { type: 'boolean' }, recoveryCodes: strings }),
      errors: [...INPUT, ...ADMIN, 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/mfa/verify',
      operationId: 'auth_mfaVerify',
      tag: 'auth',
      security: 'none',
      summary:
        'The second step of a sign-in: the mfaToken login answered and a code (or a recovery code); sets the session cookie. Five wrong codes lock the step for 15 minutes (429)',
      body: body({ mfaToken: str, code, recoveryCode }, ['mfaToken']),
      response: session,
      errors: [...INPUT, 'UNAUTHORIZED'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/mfa/disable',
      operationId: 'auth_mfaDisable',
      tag: 'auth',
      security: 'required',
      summary:
        'Turn two-factor authentication off with a current code or a recovery code (not for roles that require it)',
      body: body({ code, recoveryCode }, []),
      response: success,
      errors: [...INPUT, ...ADMIN, 'UNPROCESSABLE_ENTITY'],
    },
  ];
}

/** OpenID Connect sign-in: the configured providers, each one's start and callback. */
function oidcOperations(): Operation[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/auth/oidc',
      operationId: 'auth_oidcProviders',
      tag: 'auth',
      security: 'none',
      summary: 'The OpenID Connect providers users may sign in with',
      response: object({ items: { type: 'array', items: object({ name: str, label: str, startUrl: str }) } }),
      errors: [],
    },
    {
      method: 'GET',
      path: '/api/v1/auth/oidc/{provider}/start',
      operationId: 'auth_oidcStart',
      tag: 'auth',
      security: 'none',
      summary:
        'Open in the browser: 302 to the provider (authorization code flow with PKCE, state and nonce); `returnTo` is the path of this site to land on (default /)',
      query: [{ name: 'returnTo', in: 'query', schema: { type: 'string', maxLength: 500 } }],
      status: 302,
      responseDescription: 'To the provider’s sign-in page',
      errors: [...INPUT, 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    },
    {
      method: 'GET',
      path: '/api/v1/auth/oidc/{provider}/callback',
      operationId: 'auth_oidcCallback',
      tag: 'auth',
      security: 'none',
      summary:
        'Where the provider sends the browser back: signs in the account with the provider-verified email (linked, or created with the provider’s roles), sets the session cookie and goes on to returnTo; an account with two-factor authentication gets a code form instead',
      response: str,
      responseType: 'html',
      errors: [...INPUT, 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/oidc/mfa',
      operationId: 'auth_oidcMfa',
      tag: 'auth',
      security: 'none',
      summary:
        'The code form of an OpenID sign-in into an account with two-factor authentication (form-encoded `code`); 303 to returnTo when it passes, the form again (401) when not',
      body: object({ code: str }, ['code']),
      bodyType: 'form',
      status: 303,
      responseDescription: 'Signed in: to returnTo',
      errors: ['UNAUTHORIZED', 'RATE_LIMITED'],
    },
  ];
}

/** The webhook routes beyond the generic ones (administrators only). */
function webhookOperations(): Operation[] {
  const webhook = data({ $ref: '#/components/schemas/Webhook' });
  return [
    {
      method: 'POST',
      path: '/api/v1/webhooks/{id}/rotate-secret',
      operationId: 'webhooks_rotateSecret',
      tag: 'webhooks',
      summary: 'A new signing secret for the webhook, shown in this answer only (the old one stops at once)',
      response: webhook,
      errors: [...ADMIN, 'NOT_FOUND'],
    },
    {
      method: 'POST',
      path: '/api/v1/webhooks/{id}/replay',
      operationId: 'webhooks_replay',
      tag: 'webhooks',
      summary: `Sends the webhook's matching events after \`from\` up to \`to\` (default: the last) again, at most 1000; 202 with how many were queued`,
      body: body(
        {
          from: { type: 'integer', minimum: 0, description: 'Events after this id are sent' },
          to: { type: 'integer', minimum: 0, description: 'The last event id to send (default: the last event)' },
        },
        ['from'],
      ),
      status: 202,
      response: data(object({ queued: { type: 'integer' }, from: { type: 'integer' }, to: { type: 'integer' } })),
      errors: [...ADMIN, ...INPUT, 'NOT_FOUND'],
    },
    {
      method: 'POST',
      path: '/api/v1/webhookDeliveries/{id}/redeliver',
      operationId: 'webhookDeliveries_redeliver',
      tag: 'webhookDeliveries',
      summary: 'Sends a delivered or failed delivery again (202); 409 while it is still pending',
      status: 202,
      response: data({ $ref: '#/components/schemas/WebhookDelivery' }),
      errors: [...ADMIN, 'NOT_FOUND', 'CONFLICT'],
    },
  ];
}
