/**
 * The shell: sign-in when there is no credential, else the navigation (only what the key may
 * use and the gateway serves) and the current view.
 */
import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { credential, request, setCredential, whenUnauthenticated } from './api';
import { fetchPrincipal, Session } from './session';
import { useRoute } from './router';
import { Button, ErrorNote, Loading, SessionContext } from './ui';
import { GROUPS, VIEWS, type View } from './views';
import { SignIn } from './pages/sign-in';

/** The admin paths this gateway serves (its OpenAPI document), to hide views of absent plugins. */
async function servedPaths(): Promise<Set<string>> {
  try {
    const doc = await request<{ paths?: Record<string, unknown> }>('GET', '/v1/openapi.json');
    return new Set(Object.keys(doc.paths ?? {}).map((p) => p.replace(/\{[^}]+\}/g, ':p')));
  } catch {
    return new Set(); // no document: show every view the scopes allow
  }
}

function visible(view: View, session: Session, paths: Set<string>): boolean {
  if (view.scopes.length > 0 && !session.canAny(...view.scopes)) return false;
  return view.api === undefined || paths.size === 0 || paths.has(view.api);
}

export function App(): JSX.Element {
  const [session, setSession] = useState<Session | null>(null);
  const [paths, setPaths] = useState<Set<string> | null>(null);
  const [problem, setProblem] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [checking, setChecking] = useState(credential() !== null);

  const signOut = (why?: string): void => {
    setCredential(null);
    setSession(null);
    setNotice(why);
  };

  useEffect(() => {
    whenUnauthenticated(() => signOut('The gateway no longer accepts this key (revoked, expired or rotated). Sign in again.'));
    void servedPaths().then(setPaths);
    if (credential() === null) return;
    fetchPrincipal().then(
      (p) => {
        setSession(new Session(p));
        setChecking(false);
      },
      (err: unknown) => {
        setProblem(err);
        setCredential(null);
        setChecking(false);
      },
    );
  }, []);

  if (checking || paths === null) return <Loading />;
  if (session === null) {
    return (
      <SignIn
        notice={notice}
        error={problem}
        onSignedIn={(token, principal) => {
          setCredential(token);
          setProblem(undefined);
          setNotice(undefined);
          setSession(new Session(principal));
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} paths={paths} onSignOut={() => signOut()} />
    </SessionContext.Provider>
  );
}

function Shell({ session, paths, onSignOut }: { session: Session; paths: Set<string>; onSignOut: () => void }): JSX.Element {
  const route = useRoute();
  const [menuOpen, setMenuOpen] = useState(false);
  const views = useMemo(() => VIEWS.filter((v) => visible(v, session, paths)), [session, paths]);
  const current = views.find((v) => v.path === '/' ? route.path === '/' : route.path === v.path || route.path.startsWith(`${v.path}/`));
  useEffect(() => setMenuOpen(false), [route.path]);
  const p = session.principal;
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header class="topbar">
        <Button class="menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </Button>
        <a class="brand" href="#/">
          Gateway console
        </a>
        <span class="who" title={p.scopes.length + ' scopes'}>
          {session.label}
          <span class="muted"> · {p.workspace_id === null ? 'organisation' : `workspace ${p.workspace_slug ?? p.workspace_id}`}</span>
        </span>
        <Button onClick={onSignOut}>Sign out</Button>
      </header>
      <nav id="nav" class={menuOpen ? 'nav open' : 'nav'} aria-label="Console">
        {GROUPS.map((group) => {
          const items = views.filter((v) => v.group === group);
          if (items.length === 0) return null;
          return (
            <div class="nav-group" key={group}>
              <h2>{group}</h2>
              <ul>
                {items.map((v) => (
                  <li key={v.path}>
                    <a href={`#${v.path}`} aria-current={current === v ? 'page' : undefined}>
                      {v.title}
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          );
        })}
      </nav>
      <main id="main" tabIndex={-1}>
        {current === undefined ? (
          <NotAllowed />
        ) : (
          <current.component route={route} key={current.path} />
        )}
      </main>
    </div>
  );
}

function NotAllowed(): JSX.Element {
  return (
    <section class="page">
      <h1>Not here</h1>
      <ErrorNote error={new Error('This page does not exist, or this key\'s scopes do not include it.')} />
      <p>
        <a href="#/">Back to the start page</a>
      </p>
    </section>
  );
}
