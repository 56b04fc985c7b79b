import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';

/** How the provider describes one of its users (the login typed at its sign-in form is the subject). */
export interface IdpAccount {
  email?: string;
  emailVerified?: boolean;
  name?: string;
}

export const CLIENT_ID = 'entigen-test';
export const CLIENT_SECRET = 'a-client-secret-for-the-tests';

/** The one provider the browser tests sign in with: `test`, labelled "Test IdP", giving USER. */
export function testIdpConfig(issuer: string) {
  return {
    name: 'test',
    label: 'Test IdP',
    issuer,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    scopes: ['openid', 'email', 'profile'],
    roles: ['USER'],
  };
}

/**
 * A real OpenID provider (oidc-provider) on a port of its own, with its development sign-in and
 * consent pages. `configure` registers the relying party's redirect URI (known once it listens).
 * `codeTtlSeconds` can be lowered to let codes expire.
 */
export async function oidcProvider(accounts: Record<string, IdpAccount> = {}) {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  /** `publishedKeys`: a JWK Set served at /jwks instead of the provider's own (its tokens then fail verification). */
  const state: { codeTtlSeconds: number; publishedKeys?: object } = { codeTtlSeconds: 60 };
  let handler: ((req: never, res: never) => void) | undefined;
  server.on('request', (req, res) => {
    if (state.publishedKeys && req.url?.startsWith('/jwks'))
      return res
        .writeHead(200, { 'content-type': 'application/jwk-set+json' })
        .end(JSON.stringify(state.publishedKeys));
    return handler ? handler(req as never, res as never) : res.writeHead(503).end();
  });
  return {
    issuer,
    state,
    configure(redirectUris: string[]) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            redirect_uris: redirectUris,
            response_types: ['code'],
            grant_types: ['authorization_code'],
          },
        ],
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        cookies: { keys: ['oidc-provider-test-cookie-key'] },
        ttl: {
          AuthorizationCode: () => state.codeTtlSeconds,
          AccessToken: 600,
          IdToken: 600,
          Interaction: 600,
          Session: 600,
          Grant: 600,
        },
        features: { devInteractions: { enabled: true } },
        async findAccount(_ctx, id) {
          const account = accounts[id] ?? {};
          return {
            accountId: id,
            async claims() {
              return {
                sub: id,
                email: account.email ?? `${id}@example.test`,
                email_verified: account.emailVerified ?? true,
                name: account.name ?? `User ${id}`,
              };
            },
          };
        },
      });
      handler = provider.callback() as never;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A cookie jar per origin, enough to drive the provider's pages and entigen's callback by HTTP. */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();

  header(url: string): string {
    return [...(this.jars.get(new URL(url).host)?.entries() ?? [])].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  keep(url: string, response: Response): void {
    const host = new URL(url).host;
    const jar = this.jars.get(host) ?? new Map<string, string>();
    this.jars.set(host, jar);
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
  }

  value(url: string, name: string): string | undefined {
    return this.jars.get(new URL(url).host)?.get(name);
  }
}

/** fetch without following redirects, carrying and keeping the jar's cookies. */
export async function browse(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie) headers.set('cookie', cookie);
  const response = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.keep(url, response);
  return response;
}

/**
 * From entigen's start URL through the provider's sign-in (as `login`) and consent (or its
 * abort) to the URL the provider sends the browser back to, which is not opened.
 */
export async function signInAtProvider(
  jar: CookieJar,
  startUrl: string,
  login: string,
  { callbackPrefix, deny = false }: { callbackPrefix: string; deny?: boolean },
): Promise<string> {
  let url = startUrl;
  for (let hops = 0; hops < 20; hops++) {
    if (url.startsWith(callbackPrefix) && hops > 0) return url;
    const response = await browse(jar, url);
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${page.slice(0, 300)}`);
    const action = new URL(/<form[^>]*action="([^"]+)"/.exec(page)![1], url).href;
    const prompt = /name="prompt" value="(\w+)"/.exec(page)![1];
    if (deny && prompt === 'consent') {
      url = new URL(`${new URL(action).pathname}/abort`, url).href;
      continue;
    }
    const form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'anything' } : { prompt });
    const submitted = await browse(jar, action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    if (submitted.status < 300 || submitted.status >= 400)
      throw new Error(`${action} answered ${submitted.status}: ${(await submitted.text()).slice(0, 300)}`);
    url = new URL(submitted.headers.get('location')!, action).href;
  }
  throw new Error('the sign-in did not come back to the callback');
}
