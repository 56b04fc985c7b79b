import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, api } from '../api.js';
import type { MfaChallenge, OidcProvider, Session } from '../apiTypes.js';

type Provider = OidcProvider;
type Challenge = MfaChallenge;
const METHODS: ['password' | 'ldap', string][] = [
  ['password', 'Password'],
  ['ldap', 'Directory (LDAP)'],
];

/** Password or LDAP sign-in, the second step of an account with TOTP, and the OpenID providers. */
export function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: () => void }) {
  const [authType, setAuthType] = useState<'password' | 'ldap'>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [challenge, setChallenge] = useState<Challenge | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<Provider[]>([]);

  useEffect(() => {
    api<{ items: Provider[] }>('GET', '/auth/oidc', { quiet401: true })
      .then((answer) => setProviders(answer.items ?? []))
      .catch(() => setProviders([]));
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (challenge) {
        // Six digits are a code from the app; anything else is one of the recovery codes (xxxxx-xxxxx).
        const answer = /^\s*\d{6}\s*$/.test(code) ? { code: code.trim() } : { recoveryCode: code.trim() };
        await api('POST', '/auth/mfa/verify', { body: { mfaToken: challenge.mfaToken, ...answer }, quiet401: true });
        return onSignedIn();
      }
      const answer = await api<Session | Challenge>('POST', '/auth/login', {
        body: { authType, email, password },
        quiet401: true,
      });
      if ('mfaRequired' in answer) setChallenge(answer);
      else onSignedIn();
    } catch (failure) {
      setError(failure instanceof ApiFailure ? failure.message : 'Sign-in failed');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to the console</h1>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        {challenge ? (
          <label>
            Code from your authenticator app (or a recovery code)
            <input
              id="code"
              name="code"
              autocomplete="one-time-code"
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
            />
          </label>
        ) : (
          <>
            <fieldset class="segmented">
              <legend>Sign in with</legend>
              {METHODS.map(([value, label]) => (
                <label key={value}>
                  <input
                    type="radio"
                    name="authType"
                    value={value}
                    checked={authType === value}
                    onChange={() => setAuthType(value)}
                  />
                  {label}
                </label>
              ))}
            </fieldset>
            <label>
              {authType === 'ldap' ? 'User name or email' : 'Email'}
              <input
                id="email"
                name="email"
                autocomplete="username"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
              />
            </label>
            <label>
              Password
              <input
                id="password"
                name="password"
                type="password"
                autocomplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
          </>
        )}
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {challenge ? 'Verify' : 'Sign in'}
        </button>
        {!challenge && providers.length > 0 && (
          <div class="providers">
            {providers.map((p) => (
              <a
                key={p.name}
                class="button"
                href={`/api/v1/auth/oidc/${encodeURIComponent(p.name)}/start?returnTo=${encodeURIComponent('/admin')}`}
              >
                Continue with {p.label}
              </a>
            ))}
          </div>
        )}
      </form>
    </main>
  );
}
