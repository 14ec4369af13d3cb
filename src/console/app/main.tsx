// The console's shell: signed out it shows sign-in and sign-up; signed in, the navigation and the
// page the address names (hash routes such as #/agents/<id>/chat).
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, onUnauthorized, send, session, type User } from './api.js';
import { AuthPage } from './pages/auth.js';
import { AccountPage, TokensPage } from './pages/account.js';
import { AgentDetailPage, AgentFormPage, AgentsPage } from './pages/agents.js';
import { ChatPage } from './pages/chat.js';
import { RunPage } from './pages/run.js';
import { RunsPage } from './pages/runs.js';
import { DocumentPage, DocumentsPage, SearchPage } from './pages/documents.js';
import { PromptsPage, TagsPage, ToolsPage } from './pages/resources.js';
import { WebhookPage, WebhooksPage } from './pages/webhooks.js';
import { ConnectionsPage } from './pages/connections.js';
import { href, navigate, useRoute } from './ui.js';

const NAV: [string, string][] = [
  ['/agents', 'Agents'],
  ['/documents', 'Documents'],
  ['/search', 'Search'],
  ['/tools', 'Tools'],
  ['/prompts', 'Prompts'],
  ['/tags', 'Tags'],
  ['/connections', 'Connections'],
  ['/webhooks', 'Webhooks'],
  ['/tokens', 'API tokens'],
  ['/account', 'Account'],
];

function App() {
  const [user, setUser] = useState<User | null | undefined>(session.token() ? undefined : null);
  const [notice, setNotice] = useState<string>();
  const route = useRoute();

  useEffect(() => {
    onUnauthorized(() => {
      setUser(null);
      setNotice('Your session has ended (the token was revoked or expired). Please sign in again.');
    });
    if (session.token()) get<User>('/auth/me').then(setUser, () => setUser(null));
  }, []);

  // Focus the page heading after navigation, so keyboard and screen-reader users start there.
  useEffect(() => {
    document.getElementById('page-title')?.focus({ preventScroll: true });
  }, [route.path]);

  if (user === undefined) return <p class="loading">Loading…</p>;
  if (user === null) {
    return (
      <>
        <main id="main">
          <AuthPage
            notice={notice}
            onSignedIn={(signedIn) => {
              setNotice(undefined);
              setUser(signedIn);
              if (route.path === '/') navigate('/agents');
            }}
          />
        </main>
        <Footer />
      </>
    );
  }

  async function signOut() {
    const tokenId = session.tokenId();
    // Revoke the sign-in token on the service, not only forget it here.
    if (tokenId) await send('DELETE', `/api-tokens/${encodeURIComponent(tokenId)}`).catch(() => undefined);
    session.clear();
    setNotice('You are signed out.');
    setUser(null);
    navigate('/');
  }

  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('page-title')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('/agents')}>
          Agent console
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([path, label]) => (
              <li key={path}>
                <a href={href(path)} aria-current={route.path.startsWith(path) ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="muted">{user.name}</span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        <Page
          parts={route.parts}
          query={route.query}
          user={user}
          onUserChange={setUser}
          onDeleted={() => {
            session.clear();
            setNotice('Your account was deleted.');
            setUser(null);
            navigate('/');
          }}
        />
      </main>
      <Footer />
    </>
  );
}

interface PageProps {
  parts: string[];
  query: URLSearchParams;
  user: User;
  onUserChange: (user: User) => void;
  onDeleted: () => void;
}

function Page({ parts, query, user, onUserChange, onDeleted }: PageProps) {
  const [section, id, sub] = parts;
  switch (section) {
    case undefined:
    case 'agents':
      if (!id) return <AgentsPage />;
      if (id === 'new') return <AgentFormPage key="new" />;
      if (sub === 'edit') return <AgentFormPage key={id} id={id} />;
      if (sub === 'chat') return <ChatPage key={id} id={id} sessionId={query.get('session') ?? undefined} />;
      if (sub === 'runs') return <RunsPage key={id} agentId={id} />;
      return <AgentDetailPage key={id} id={id} />;
    case 'runs':
      return <RunPage key={id} id={id} />;
    case 'documents':
      return id ? <DocumentPage key={id} id={id} /> : <DocumentsPage />;
    case 'search':
      return <SearchPage key={query.toString()} initial={query.get('q') ?? ''} documentId={query.get('document') ?? undefined} />;
    case 'tools':
      return <ToolsPage />;
    case 'prompts':
      return <PromptsPage />;
    case 'tags':
      return <TagsPage />;
    case 'connections':
      return <ConnectionsPage />;
    case 'webhooks':
      return id ? <WebhookPage key={id} id={id} /> : <WebhooksPage />;
    case 'tokens':
      return <TokensPage />;
    case 'account':
      return <AccountPage user={user} onUserChange={onUserChange} onDeleted={onDeleted} />;
    default:
      return (
        <section>
          <h1 id="page-title" tabIndex={-1}>
            Not found
          </h1>
          <p>
            There is no page here. Go to <a href={href('/agents')}>your agents</a>.
          </p>
        </section>
      );
  }
}

function Footer() {
  // The page states the service's version (as the OpenAPI document's info.version does).
  const version = document.querySelector<HTMLMetaElement>('meta[name="service-version"]')?.content;
  return (
    <footer class="bottom">
      <a href="docs">API reference</a>
      {version && (
        <span class="muted" data-testid="version">
          Version {version}
        </span>
      )}
    </footer>
  );
}

render(<App />, document.getElementById('app')!);
