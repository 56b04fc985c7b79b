import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A user of the test provider, answered as GitHub answers /user and /user/emails. */
export interface OAuth2User {
  id: number;
  login: string;
  name?: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export const OAUTH2_CLIENT_ID = 'entigen-github-test';
export const OAUTH2_CLIENT_SECRET = 'github-test-secret';

interface Grant {
  user: string;
  redirectUri: string;
  challenge?: string;
  used: boolean;
}

/**
 * A plain OAuth2 provider shaped like GitHub's (authorize, access_token, user, user/emails), over
 * real HTTP: it checks the client secret, the redirect URI, single use of each code and the PKCE
 * verifier, and records what it was asked. `signInAs` picks who the next authorization signs in.
 */
export async function oauth2Provider(users: Record<string, OAuth2User>) {
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, string>();
  const seen: { authorize: URLSearchParams[]; token: URLSearchParams[] } = { authorize: [], token: [] };
  let next = Object.keys(users)[0];

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const readForm = async (req: IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return new URLSearchParams(text);
  };
  const userOf = (req: IncomingMessage) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    return token ? users[tokens.get(token) ?? ''] : undefined;
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://provider');
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      seen.authorize.push(url.searchParams);
      const redirectUri = url.searchParams.get('redirect_uri') ?? '';
      if (url.searchParams.get('client_id') !== OAUTH2_CLIENT_ID) return json(res, 400, { error: 'unknown client' });
      const code = randomBytes(12).toString('hex');
      const challenge = url.searchParams.get('code_challenge') ?? undefined;
      grants.set(code, { user: next, redirectUri, challenge, used: false });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return void res.end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = await readForm(req);
      seen.token.push(form);
      const grant = grants.get(form.get('code') ?? '');
      // GitHub answers refusals with 200 and an error field.
      if (form.get('client_id') !== OAUTH2_CLIENT_ID || form.get('client_secret') !== OAUTH2_CLIENT_SECRET)
        return json(res, 200, { error: 'incorrect_client_credentials' });
      if (!grant || grant.used || grant.redirectUri !== form.get('redirect_uri'))
        return json(res, 200, { error: 'bad_verification_code' });
      const verifier = form.get('code_verifier');
      if (
        grant.challenge &&
        createHash('sha256')
          .update(verifier ?? '')
          .digest('base64url') !== grant.challenge
      )
        return json(res, 200, { error: 'invalid_grant' });
      grant.used = true;
      const token = randomBytes(16).toString('hex');
      tokens.set(token, grant.user);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const user = userOf(req);
    if (req.method === 'GET' && url.pathname === '/user')
      return user ? json(res, 200, { id: user.id, login: user.login, name: user.name ?? null }) : json(res, 401, {});
    if (req.method === 'GET' && url.pathname === '/user/emails')
      return user ? json(res, 200, user.emails) : json(res, 401, {});
    json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    signInAs(login: string) {
      next = login;
    },
    /** The config of this provider as entigen reads it: GitHub's shape at this address. */
    settings: {
      authorizeUrl: `${base}/login/oauth/authorize`,
      tokenUrl: `${base}/login/oauth/access_token`,
      userinfoUrl: `${base}/user`,
      emailsUrl: `${base}/user/emails`,
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
