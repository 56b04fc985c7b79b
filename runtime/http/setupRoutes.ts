import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { pages } from '../api/index.js';
import { issueSession } from '../auth/accounts.js';
import type { AuthContext } from '../auth/authContext.js';
import { createFirstAdmin, type SetupState } from '../auth/setup.js';
import { publicUser } from '../auth/users.js';
import { ApiError } from '../errors/apiError.js';
import type { MailTestResult } from '../mail/testMail.js';
import { escapeHtml } from '../model/escapeHtml.js';
import { packageRoot } from '../model/packageRoot.js';
import { DeclaredRouter } from './declaredRouter.js';
import { unstorableInput } from './refuseUnstorableInput.js';

export const SETUP_PATH = pages.setupPage.path;
/** The setup page's "send a test mail" button: checks the mail settings before anything depends on them. */
export const SETUP_TEST_MAIL_PATH = pages.setupTestMail.path;
export const HOME_PATH = pages.home.path;
const EXEMPT = new Set([SETUP_PATH, SETUP_TEST_MAIL_PATH, '/api/health']);

/** What a caller of the API hears before setup: where to create the administrator, and how without a browser. */
export const SETUP_PENDING =
  'Setup is not done: create the administrator at /setup, or start the server with ENTIGEN_ADMIN_EMAIL and ENTIGEN_ADMIN_PASSWORD set';

/**
 * While no admin exists: a page a browser asks for goes 302 to /setup; the API (`/api/*` but the
 * reference page) answers 503 in the error envelope, saying what to do, unless a browser
 * navigates to it (Accept prefers HTML); /setup and health stay open.
 */
export function setupGate(state: SetupState) {
  return async function setupGate(req: Request, res: Response, next: NextFunction): Promise<void> {
    // Once done, answered without awaiting (no turn of the event loop per request).
    if (state.known || EXEMPT.has(req.path) || (await state.isDone())) return next();
    const page = req.method === 'GET' || req.method === 'HEAD';
    if (page && (!isApi(req.path) || req.accepts(['json', 'html']) === 'html'))
      return void res.redirect(302, SETUP_PATH);
    next(new ApiError('SERVICE_UNAVAILABLE', SETUP_PENDING, { setup: SETUP_PATH }));
  };
}

/** The API's paths, but the reference page (a page for browsers). */
function isApi(path: string): boolean {
  return path.startsWith('/api/') && !path.startsWith('/api/docs');
}

/** GET /setup: the form; POST /setup: form or JSON; 404 once an admin exists. GET /: the page a finished setup lands on. */
export function setupRoutes(auth: AuthContext, state: SetupState): Router {
  const router = new DeclaredRouter();
  const template = readFileSync(join(packageRoot, 'templates', 'setup.html'), 'utf8');
  const home = readFileSync(join(packageRoot, 'templates', 'home.html'), 'utf8').replace(
    /\{\{appName\}\}/g,
    escapeHtml(auth.ctx.registry.model.app.name),
  );
  const tenancy = auth.ctx.registry.model.tenancy;
  const tenantLabel = tenancy ? auth.ctx.registry.entities.get(tenancy.entity)!.model.name : '';
  const policy = auth.config.passwordPolicy;

  const page = (values: Record<string, string>, errors: Record<string, string>, notice?: MailTestResult) => {
    const error = (key: string) =>
      errors[key] ? `<div class="error" role="alert">${escapeHtml(errors[key])}</div>` : '';
    const fields: Record<string, string> = {
      appName: escapeHtml(auth.ctx.registry.model.app.name),
      name: escapeHtml(values.name ?? ''),
      email: escapeHtml(values.email ?? ''),
      passwordRule: `At least ${policy.minLength} characters${policy.requireSpecial ? ', with a special character' : ''}.`,
      formError: error('form'),
      mailNotice: notice
        ? `<div class="${notice.ok ? 'note' : 'error'}" role="status">${escapeHtml(notice.message)}</div>`
        : '',
      nameError: error('name'),
      emailError: error('email'),
      passwordError: error('password'),
      tenantField: tenancy
        ? `<label for="tenantName">First ${escapeHtml(tenantLabel.toLowerCase())}</label>` +
          `<input id="tenantName" name="tenantName" required maxlength="200" value="${escapeHtml(values.tenantName ?? '')}">${error('tenantName')}`
        : '',
    };
    return template.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => fields[key] ?? '');
  };

  // Before setup the gate sends `/` to /setup; afterwards it says what to open next.
  router.raw(pages.home, ({ res }) => void res.type('html').send(home));

  router.raw(pages.setupPage, async ({ res }) => {
    if (await state.isDone()) throw new ApiError('NOT_FOUND', 'Setup is done');
    res.type('html').send(page({}, {}));
  });

  const forms = [express.urlencoded({ extended: false, limit: '16kb' }), express.json({ limit: '16kb' })];
  const fromForm = (req: Request) => req.is('application/x-www-form-urlencoded') !== false;
  const valuesOf = (body: { name?: string; email: string; password?: string; tenantName?: string }) => ({
    name: body.name ?? '',
    email: body.email,
    password: body.password ?? '',
    tenantName: body.tenantName ?? '',
  });
  // A form refused before it is read (a field missing or too long) is shown again with what was wrong.
  const invalid = (error: ApiError, req: Request, res: Response) => {
    if (!fromForm(req)) throw error;
    res
      .status(error.status)
      .type('html')
      .send(page({}, error.details ?? { form: error.message }));
  };

  router.raw(
    pages.setupSubmit,
    async ({ req, res, body }) => {
      if (await state.isDone()) throw new ApiError('NOT_FOUND', 'Setup is done');
      const values = valuesOf(body);
      try {
        const unstorable = unstorableInput(values);
        if (unstorable) throw unstorable;
        const admin = await createFirstAdmin(auth.ctx, policy, values);
        state.markDone();
        const token = issueSession(auth, admin.id);
        const cookieWarning = auth.cookie.set(req, res, token);
        if (fromForm(req)) return void res.redirect(303, HOME_PATH);
        res.status(201).json({ user: publicUser(admin), token, ...(cookieWarning ? { cookieWarning } : {}) });
      } catch (error) {
        if (!fromForm(req) || !(error instanceof ApiError)) throw error;
        auth.cookie.clear(req, res);
        res
          .status(error.status)
          .type('html')
          .send(page(values, error.details ?? { form: error.message }));
      }
    },
    { before: forms, invalid },
  );
  // Before an administrator exists, like /setup itself; it mails only the address typed into the form.
  router.raw(
    pages.setupTestMail,
    async ({ req, res, body }) => {
      if (await state.isDone()) throw new ApiError('NOT_FOUND', 'Setup is done');
      const { password: _password, ...values } = valuesOf(body);
      try {
        const unstorable = unstorableInput(values);
        if (unstorable) throw unstorable;
        const result = await auth.testMail(values.email);
        if (!fromForm(req)) return void res.json(result);
        res.type('html').send(page(values, {}, result));
      } catch (error) {
        if (!fromForm(req) || !(error instanceof ApiError)) throw error;
        res
          .status(error.status)
          .type('html')
          .send(page(values, error.details?.to ? { email: error.details.to } : { form: error.message }));
      }
    },
    { before: forms, invalid },
  );
  return router.router;
}
