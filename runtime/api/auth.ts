import { ACCESS_ERRORS, INPUT_ERRORS, route } from './route.js';
import { Body, Enum, NonBlank, Nullable, Success, SuccessMessage, Text, Type } from './schemas.js';

// /api/v1/auth: accounts, sessions, passwords, addresses, two-factor steps and OpenID Connect.

/** Where the auth routes live; they count in the auth rate-limit tier. */
export const AUTH_PATH = '/api/v1/auth';

const INPUT = INPUT_ERRORS;
const ADMIN = ACCESS_ERRORS;
const EMAIL = Text(320);
const PASSWORD = Text(1024);
const TOKEN = Text(200);

export const SessionUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  displayName: Type.String(),
  emailVerified: Type.Optional(
    Type.Boolean({
      description:
        'false while nobody proved the address of a self-registered account (a mailed link or code, a provider); true once proven',
    }),
  ),
  mfaEnabled: Type.Optional(
    Type.Boolean({
      description: 'Two-factor authentication is on: password and LDAP sign-ins need a second step',
    }),
  ),
});
/** Present when the browser will not keep the session cookie (Secure, over plain HTTP): what to change. */
const CookieWarning = Type.Optional(
  Type.String({
    description:
      'Present when the browser will not keep the session cookie (it is Secure and the request came over plain HTTP); the token still works as a Bearer token',
  }),
);
export const Session = Type.Object(
  { user: SessionUser, token: Type.String(), cookieWarning: CookieWarning },
  { description: 'A finished sign-in: the user and the session token (the cookie is set too)' },
);
export const Registered = Type.Object(
  {
    user: SessionUser,
    token: Type.Optional(
      Type.String({
        description:
          'The session token (the cookie is set too); absent where address verification is on: the answer is then the same whether or not the address had an account, and the new user signs in with the password',
      }),
    ),
    cookieWarning: CookieWarning,
  },
  { description: 'The registered user, signed in where address verification is off' },
);
export const MfaChallenge = Type.Object(
  {
    mfaRequired: Type.Literal(true),
    mfaToken: Type.String(),
    expiresAt: Type.String(),
    methods: Type.Array(Type.String()),
  },
  {
    description:
      'Login of an account with two-factor authentication (202): send the mfaToken and a code to /auth/mfa/verify',
  },
);
export const MailTestResult = Type.Object(
  { ok: Type.Boolean(), transport: Enum(['smtp', 'log']), to: Type.String(), message: Type.String() },
  { description: 'What a mail-settings test reports' },
);
export const Me = Type.Object({
  user: SessionUser,
  roles: Type.Array(Type.String()),
  permissions: Type.Array(Type.String()),
  mfaEnrollmentRequired: Type.Optional(Type.Boolean()),
  tenants: Type.Optional(
    Type.Array(Type.Object({ id: Type.String(), label: Nullable(Type.String()) }), {
      description: 'With tenancy: the tenants the user is a member of (at most 200), for x-tenant-id',
    }),
  ),
});

const auth = { tag: 'auth', rateLimit: 'auth' } as const;

export const register = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/register',
  operationId: 'auth_register',
  access: 'public',
  summary: 'Create an account and sign in (sets the session cookie); with address verification on, no session',
  body: Body({ email: EMAIL, password: PASSWORD, displayName: NonBlank(200) }),
  status: 201,
  response: Registered,
  errors: [...INPUT, 'CONFLICT'],
  client: { group: 'auth', name: 'register', session: 'use' },
});

/** The 202 of a first factor passed on an account with two-factor authentication (login, passwordless). */
const MFA_CHALLENGE_ANSWER = {
  '202': {
    description:
      'Two-factor authentication is on for this account: no session yet; POST /api/v1/auth/mfa/verify with the mfaToken and a code',
    content: { 'application/json': { schema: MfaChallenge } },
  },
};

export const login = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/login',
  operationId: 'auth_login',
  access: 'public',
  summary: 'Sign in with a password or through LDAP (sets the session cookie)',
  body: Body({
    authType: Type.Optional(Enum(['password', 'ldap'])),
    email: EMAIL,
    password: PASSWORD,
    ldapConfig: Type.Optional(
      Body({
        url: Type.Optional(Text(500)),
        baseDN: Type.Optional(Text(500)),
        userFilter: Type.Optional(Text(500)),
      }),
    ),
  }),
  response: Session,
  errors: [...INPUT, 'UNAUTHORIZED', 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
  responses: MFA_CHALLENGE_ANSWER,
  client: {
    group: 'auth',
    name: 'login',
    session: 'use',
    doc: 'A session, or for an account with two-factor authentication the challenge verifyMfa completes.',
  },
});

const CODE = Type.Unsafe<string | number>({
  type: ['string', 'integer'],
  maxLength: 64,
  description: 'Six digits from the authenticator app (a number counts as its six digits), or a recovery code',
});
const RECOVERY_CODE = Type.String({ maxLength: 64, description: 'A recovery code (instead of `code`)' });

export const mfaEnroll = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/mfa/enroll',
  operationId: 'auth_mfaEnroll',
  access: 'signedIn',
  summary: 'Start two-factor authentication: a new TOTP secret, shown only here',
  description:
    "The secret comes as an otpauth:// URI and a QR code (SVG data URL); confirm it within 15 minutes with POST /api/v1/auth/mfa/confirm. A session older than ten minutes also sends the account's password (`currentPassword`).",
  body: Body({ currentPassword: Type.Optional(PASSWORD) }),
  bodyOptional: true,
  response: Type.Object({
    secret: Type.String(),
    otpauthUri: Type.String(),
    qrCode: Type.String(),
    expiresAt: Type.String(),
  }),
  errors: [...INPUT, ...ADMIN, 'CONFLICT'],
  client: {
    group: 'auth',
    name: 'mfaEnroll',
    doc: 'Starts two-factor authentication: the secret (shown only here), its otpauth:// URI and a QR code (SVG data URL).',
  },
});

export const mfaConfirm = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/mfa/confirm',
  operationId: 'auth_mfaConfirm',
  access: 'signedIn',
  summary: 'Turn two-factor authentication on with a current code; answers ten single-use recovery codes, shown once',
  body: Body({ code: CODE }),
  response: Type.Object({ success: Type.Boolean(), recoveryCodes: Type.Array(Type.String()) }),
  errors: [...INPUT, ...ADMIN, 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
  client: {
    group: 'auth',
    name: 'mfaConfirm',
    doc: 'Turns it on with a current code; the ten recovery codes are in this answer only.',
  },
});

export const mfaVerify = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/mfa/verify',
  operationId: 'auth_mfaVerify',
  access: 'public',
  summary: 'The second step of a sign-in: the mfaToken and a code; sets the session cookie',
  description:
    'Send the mfaToken the login answered and a six-digit code (or a recovery code as `code` or `recoveryCode`). Five wrong codes lock the step for 15 minutes (429).',
  body: Body({ mfaToken: TOKEN, code: Type.Optional(CODE), recoveryCode: Type.Optional(RECOVERY_CODE) }),
  response: Session,
  errors: [...INPUT, 'UNAUTHORIZED'],
  client: {
    group: 'auth',
    name: 'verifyMfa',
    session: 'use',
    doc: "The second step of a sign-in: the challenge's mfaToken and a code from the authenticator (or a recovery code).",
  },
});

export const mfaDisable = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/mfa/disable',
  operationId: 'auth_mfaDisable',
  access: 'signedIn',
  summary: 'Turn two-factor authentication off with a current code or a recovery code (not for roles that require it)',
  body: Body({ code: Type.Optional(CODE), recoveryCode: Type.Optional(RECOVERY_CODE) }),
  response: Success,
  errors: [...INPUT, ...ADMIN, 'UNPROCESSABLE_ENTITY'],
  client: { group: 'auth', name: 'mfaDisable' },
});

export const oidcProviders = route({
  ...auth,
  method: 'GET',
  path: '/api/v1/auth/oidc',
  operationId: 'auth_oidcProviders',
  access: 'public',
  summary: 'The sign-in providers users may sign in with: OpenID Connect ones and plain OAuth2 ones (GitHub)',
  response: Type.Object({
    items: Type.Array(Type.Object({ name: Type.String(), label: Type.String(), startUrl: Type.String() })),
  }),
  errors: [],
  client: {
    group: 'auth',
    name: 'oidcProviders',
    doc: "The sign-in providers (OpenID Connect and plain OAuth2); a browser signs in by opening a provider's startUrl (add ?returnTo=/path).",
  },
});

export const oidcStart = route({
  ...auth,
  method: 'GET',
  path: '/api/v1/auth/oidc/{provider}/start',
  operationId: 'auth_oidcStart',
  access: 'public',
  summary: "Open in the browser: 302 to the provider's sign-in page",
  description:
    'The authorization code flow with PKCE, state and nonce (plain OAuth2 providers: state, and PKCE where configured). `returnTo` is the path of this site to land on afterwards (default /).',
  query: Type.Object({ returnTo: Type.Optional(Text(500)) }),
  status: 302,
  responseDescription: "To the provider's sign-in page",
  errors: [...INPUT, 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
});

export const oidcCallback = route({
  ...auth,
  method: 'GET',
  path: '/api/v1/auth/oidc/{provider}/callback',
  operationId: 'auth_oidcCallback',
  access: 'public',
  summary: 'Where the provider sends the browser back: signs in and goes on to returnTo',
  description:
    "Signs in the account with the provider-verified email (linked, or created with the provider's roles), sets the session cookie and goes on to returnTo. An account with two-factor authentication gets a code form instead.",
  // The provider's own parameters (code, state, iss, error): read by the OpenID client, not here.
  query: Type.Object({}, { additionalProperties: true }),
  response: Type.String(),
  responseType: 'html',
  errors: [...INPUT, 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
});

export const oidcMfa = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/oidc/mfa',
  operationId: 'auth_oidcMfa',
  access: 'public',
  summary: 'The code form of an OpenID sign-in into an account with two-factor authentication',
  description: 'Form-encoded `code`: 303 to returnTo when it passes, the form again (401) when not.',
  body: Type.Object({ code: Text(64) }),
  bodyType: 'form',
  status: 303,
  responseDescription: 'Signed in: to returnTo',
  errors: ['UNAUTHORIZED', 'RATE_LIMITED'],
});

export const logout = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/logout',
  operationId: 'auth_logout',
  access: 'signedIn',
  summary: 'End the session',
  response: Success,
  errors: ['UNAUTHORIZED'],
  client: { group: 'auth', name: 'logout', session: 'end' },
});

export const changePassword = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/change-password',
  operationId: 'auth_changePassword',
  access: 'signedIn',
  summary: 'Change the password; ends every earlier session and returns a new token',
  body: Body({ currentPassword: PASSWORD, newPassword: PASSWORD }),
  response: Type.Object({ success: Type.Boolean(), token: Type.String(), cookieWarning: CookieWarning }),
  errors: [...INPUT, ...ADMIN],
  client: { group: 'auth', name: 'changePassword', session: 'use' },
});

export const me = route({
  ...auth,
  method: 'GET',
  path: '/api/v1/auth/me',
  operationId: 'auth_me',
  access: 'signedIn',
  summary: 'The signed-in user with roles and effective permissions',
  response: Me,
  errors: ['UNAUTHORIZED'],
  client: { group: 'auth', name: 'me' },
});

export const testMail = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/test-mail',
  operationId: 'auth_testMail',
  access: 'admin',
  summary:
    'Send a test mail now (past the queue) to `to` or to yourself, and report what the mail server answered (admin)',
  body: Body({ to: Type.Optional(EMAIL) }),
  bodyOptional: true,
  response: MailTestResult,
  errors: [...INPUT, ...ADMIN],
  client: {
    group: 'auth',
    name: 'testMail',
    doc: "Administrators: send a test mail now (to yourself unless `to` is given) and see the mail server's answer.",
  },
});

export const testLdap = route({
  ...auth,
  method: 'GET',
  path: '/api/v1/auth/test-ldap',
  operationId: 'auth_testLdap',
  access: 'admin',
  summary: 'Test the connection to the configured LDAP server',
  response: Type.Object({
    ok: Type.Boolean(),
    url: Type.Optional(Nullable(Type.String())),
    message: Type.Optional(Type.String()),
  }),
  errors: ADMIN,
  client: { group: 'auth', name: 'testLdap' },
});

export const forgotPassword = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/forgot-password',
  operationId: 'auth_forgotPassword',
  access: 'public',
  summary: 'Send a password-reset token (the answer does not reveal whether the account exists)',
  body: Body({ email: EMAIL }),
  status: 202,
  response: SuccessMessage,
  errors: INPUT,
  client: {
    group: 'auth',
    name: 'forgotPassword',
    doc: 'Mails a reset token to a local account, if there is one (the answer is the same either way).',
  },
});

export const passwordless = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/passwordless',
  operationId: 'auth_passwordless',
  access: 'public',
  summary: 'Mail a sign-in link or six-digit code (the answer does not reveal whether the account exists)',
  description:
    'With auth.passwordless on: an enabled account that does not sign in through LDAP gets a single-use link and/or code, valid for ten minutes; a new request ends the earlier ones, and an address gets at most three in ten minutes.',
  body: Body({ email: EMAIL }),
  status: 202,
  response: SuccessMessage,
  errors: [...INPUT, 'UNPROCESSABLE_ENTITY'],
  client: {
    group: 'auth',
    name: 'requestPasswordless',
    doc: 'Mails a sign-in link or code to the account, if there is one (the answer is the same either way).',
  },
});

export const passwordlessSignIn = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/passwordless/sign-in',
  operationId: 'auth_passwordlessSignIn',
  access: 'public',
  summary: "Sign in with the mailed link's token, or the address and the mailed code (sets the session cookie)",
  description:
    'Single use; a code allows five tries. An account with two-factor authentication answers 202 with the challenge, as login does. Every refusal is the same 401.',
  body: Body({
    token: Type.Optional(Text(200)),
    email: Type.Optional(EMAIL),
    code: Type.Optional(Text(6, { pattern: '^[0-9]{6}$', description: 'The six digits from the mail' })),
  }),
  response: Session,
  errors: [...INPUT, 'UNAUTHORIZED', 'UNPROCESSABLE_ENTITY'],
  responses: MFA_CHALLENGE_ANSWER,
  client: {
    group: 'auth',
    name: 'passwordlessSignIn',
    session: 'use',
    doc: 'A session from the mailed token or code, or for an account with two-factor authentication the challenge verifyMfa completes.',
  },
});

export const verifyEmail = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/verify-email',
  operationId: 'auth_verifyEmail',
  access: 'public',
  summary: 'Confirm an address with the token mailed at registration or for a change of address',
  body: Body({ token: TOKEN }),
  response: Type.Object({ success: Type.Boolean(), user: SessionUser }),
  errors: [...INPUT, 'CONFLICT'],
  client: {
    group: 'auth',
    name: 'verifyEmail',
    doc: 'Confirms an address with a token from a verification or change-of-address mail.',
  },
});

export const resendVerification = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/resend-verification',
  operationId: 'auth_resendVerification',
  access: 'public',
  summary: 'Mail a new verification link (the answer does not reveal whether the address is registered)',
  body: Body({ email: EMAIL }),
  status: 202,
  response: SuccessMessage,
  errors: INPUT,
  client: { group: 'auth', name: 'resendVerification' },
});

export const changeEmail = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/change-email',
  operationId: 'auth_changeEmail',
  access: 'signedIn',
  summary: 'Ask to move the account to a new address: it changes once the link mailed there is used',
  body: Body({ newEmail: EMAIL, currentPassword: PASSWORD }),
  status: 202,
  response: SuccessMessage,
  errors: [...INPUT, 'UNAUTHORIZED', 'FORBIDDEN', 'UNPROCESSABLE_ENTITY'],
  client: {
    group: 'auth',
    name: 'changeEmail',
    doc: 'The address changes once the link mailed to newEmail is used; the old address gets a notice.',
  },
});

export const resetPassword = route({
  ...auth,
  method: 'POST',
  path: '/api/v1/auth/reset-password',
  operationId: 'auth_resetPassword',
  access: 'public',
  summary: 'Set a new password with a reset token',
  body: Body({ token: TOKEN, newPassword: PASSWORD }),
  response: Success,
  errors: [...INPUT, 'UNPROCESSABLE_ENTITY'],
  client: { group: 'auth', name: 'resetPassword' },
});
