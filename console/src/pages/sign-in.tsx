/**
 * Sign-in: paste an API key (the admin key printed at first start, or any key) or a JWT. The
 * credential is checked against `GET /v1/principal` before it is kept (in session storage only).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Principal } from '../session';
import { fetchPrincipal } from '../session';
import { Button, ErrorNote, TextField } from '../ui';

export function SignIn(props: { notice?: string; error?: unknown; onSignedIn: (token: string, principal: Principal) => void }): JSX.Element {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(props.error);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const value = token.trim();
    if (value === '') return;
    setBusy(true);
    setError(undefined);
    try {
      props.onSignedIn(value, await fetchPrincipal(value));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Gateway console</h1>
        <p class="muted">
          Sign in with an API key or a JWT. On a new gateway, use the admin key printed when it first started (or make one with <code>gateway keys create</code>).
        </p>
        {props.notice !== undefined && (
          <p class="notice" role="status">
            {props.notice}
          </p>
        )}
        <TextField label="API key or JWT" type="password" name="credential" autoComplete="current-password" value={token} onInput={setToken} required hint="Kept in this tab's session storage only; closing the tab signs you out." />
        <ErrorNote error={error} />
        <Button kind="primary" type="submit" busy={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}
