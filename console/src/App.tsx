/** Sign-in with the admin secret, then the page layout: navigation, header and the current page. */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError, checkSecret, errorMessage, getSecret, serverConfig, setSecret, type ServerConfig } from './api';
import { PAGES } from './pages';
import { Link, navigate, segments, usePath, useTitle } from './router';
import { ProjectBar } from './ProjectBar';
import { FlashMessage } from './ui';

type Auth = { state: 'checking' } | { state: 'signin'; error?: string } | { state: 'ready'; secret: string | null };

export function App() {
  const [auth, setAuth] = useState<Auth>({ state: 'checking' });
  const [serverError, setServerError] = useState<string>();

  const verify = (secret: string | null, fromForm: boolean) => {
    setServerError(undefined);
    checkSecret(secret).then(
      () => {
        setSecret(secret);
        setAuth({ state: 'ready', secret });
      },
      (e) => {
        if (e instanceof ApiError && (e.status === 401 || e.status === 400 || e.status === 403)) {
          setSecret(null);
          setAuth({ state: 'signin', error: fromForm ? errorMessage(e) : undefined });
        } else {
          setServerError(errorMessage(e));
          setAuth({ state: 'signin' });
        }
      },
    );
  };

  useEffect(() => verify(getSecret(), false), []);

  if (auth.state === 'checking') return <p className="loading" role="status">Connecting to the server…</p>;
  if (auth.state === 'signin') return <SignIn error={auth.error ?? serverError} onSubmit={(s) => verify(s, true)} />;
  return (
    <Layout
      secret={auth.secret}
      onSignOut={() => {
        setSecret(null);
        setAuth({ state: 'signin' });
      }}
    />
  );
}

function SignIn({ error, onSubmit }: { error?: string; onSubmit: (secret: string) => void }) {
  useTitle('Sign in');
  const [value, setValue] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit(value);
  };
  return (
    <main className="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Svc console</h1>
        <p>Enter the admin secret of this server. It is kept in this browser tab only.</p>
        <label htmlFor="admin-secret">Admin secret</label>
        <input
          id="admin-secret"
          name="admin-secret"
          type="password"
          autoComplete="off"
          autoFocus
          required
          value={value}
          onChange={(e) => setValue(e.target.value)}
          aria-describedby={error ? 'signin-error' : undefined}
          aria-invalid={error ? true : undefined}
        />
        {error && (
          <p id="signin-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary">Sign in</button>
      </form>
    </main>
  );
}

function Layout({ secret, onSignOut }: { secret: string | null; onSignOut: () => void }) {
  const path = usePath();
  const [first = '', ...rest] = segments(path);
  const page = PAGES.find((p) => p.meta.path === first);
  const [config, setConfig] = useState<ServerConfig>();
  // below 1100 px wide the navigation is a menu behind a button (the header stays one line)
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);

  useEffect(() => {
    serverConfig().then(setConfig, () => undefined);
  }, []);

  useEffect(() => {
    if (first === '' && PAGES[0]) navigate(PAGES[0].meta.path, { replace: true });
  }, [first]);

  // move focus to the page heading after client-side navigation (not on the first load)
  const mounted = useRef(false);
  useEffect(() => {
    if (!mounted.current) {
      mounted.current = true;
      return;
    }
    document.getElementById('page-title')?.focus();
  }, [first]);

  return (
    <div className="app">
      <a className="skip" href="#main">Skip to content</a>
      <header className="topbar">
        <span className="brand">Svc console</span>
        <nav aria-label="Pages" className={menuOpen ? 'open' : undefined} onKeyDown={(e) => {
          if (e.key === 'Escape' && menuOpen) {
            setMenuOpen(false);
            document.getElementById('nav-toggle')?.focus();
          }
        }}>
          <button type="button" id="nav-toggle" className="nav-toggle" aria-expanded={menuOpen} aria-controls="nav-pages" onClick={() => setMenuOpen((o) => !o)}>
            <span aria-hidden="true">☰</span> {page?.meta.title ?? 'Pages'}
          </button>
          <ul id="nav-pages">
            {PAGES.map(({ meta }) => (
              <li key={meta.path}>
                <Link to={meta.path} title={meta.description} aria-current={meta.path === first ? 'page' : undefined}>
                  {meta.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span className="server" title={config ? `Svc server ${config.version}` : undefined}>
          {config ? `v${config.version.replace(/^v/, '')}` : ''}
          {secret === null && config && !config.is_admin_secret_set && <span className="warn badge" title="anyone who can reach this server administers it">no admin secret</span>}
        </span>
        {secret !== null && (
          <button type="button" onClick={onSignOut}>Sign out</button>
        )}
      </header>
      <main id="main" className="main" tabIndex={-1}>
        <ProjectBar />
        <FlashMessage />
        {page ? <page.Component key={page.meta.path} path={rest} /> : first === '' ? null : <NotFound />}
      </main>
    </div>
  );
}

function NotFound() {
  useTitle('Not found');
  return (
    <>
      <h1 id="page-title" tabIndex={-1}>Not found</h1>
      <p>
        There is no console page here. <Link to="">Go to the first page</Link>.
      </p>
    </>
  );
}
