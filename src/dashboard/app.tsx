import { useEffect, useState } from 'preact/hooks';
import { api, onUnauthorized, session, setCsrfToken, type Role, type SessionInfo } from './api.js';
import type { JSX } from 'preact';
import { RoleContext, can, type Action } from './access.js';
import { NotAllowedPage } from './components/view-only.js';
import { Shell } from './components/shell.js';
import { Toasts } from './components/toasts.js';
import { Loading } from './components/ui.js';
import { match, navigate, useLocation } from './router.js';
import { AcceptInvitePage } from './pages/accept-invite.js';
import { AccountPage } from './pages/account.js';
import { MailboxDetailPage } from './pages/mailbox-detail.js';
import { AddMailboxPage } from './pages/mailbox-form.js';
import { ImportMailboxesPage } from './pages/mailbox-import.js';
import { MailboxesPage } from './pages/mailboxes.js';
import { NotFoundPage } from './pages/not-found.js';
import { OAuthConfirmPage } from './pages/oauth-confirm.js';
import { OverviewPage } from './pages/overview.js';
import { ReportsPage } from './pages/reports.js';
import { SetupPage } from './pages/setup.js';
import { SignInPage } from './pages/sign-in.js';
import { TeamPage } from './pages/team.js';
import { TemplateEditorPage } from './pages/template-editor.js';
import { TemplatesPage } from './pages/templates.js';
import { WebhooksPage } from './pages/webhooks.js';
import { AlertsPage } from './pages/alerts.js';
import { PlacementTestsPage } from './pages/placement-tests.js';
import { DomainsPage } from './pages/domains.js';
import { DomainDetailPage } from './pages/domain-detail.js';
import { PeersPage } from './pages/peers.js';

function Page({ path, role }: { path: string; role: Role }) {
  // An address whose purpose the role may not carry out says so, rather than falling through to
  // the record pattern below it (`/mailboxes/new` read as the mailbox "new", which does not exist).
  const guarded = (action: Action, page: JSX.Element, refusal: Omit<Parameters<typeof NotAllowedPage>[0], 'action'>) =>
    can(role, action) ? page : <NotAllowedPage action={action} {...refusal} />;
  const mailboxes = { to: '/mailboxes', label: 'Mailboxes' };
  if (path === '/' || path === '') return <OverviewPage />;
  if (match('/mailboxes', path)) return <MailboxesPage />;
  if (match('/mailboxes/new', path))
    return guarded('change', <AddMailboxPage />, { title: 'Add mailbox', doing: 'add mailboxes', back: mailboxes });
  if (match('/mailboxes/import', path))
    return guarded('change', <ImportMailboxesPage />, {
      title: 'Import mailboxes',
      doing: 'import mailboxes',
      back: mailboxes,
    });
  const mailbox = match('/mailboxes/:id', path);
  if (mailbox) return <MailboxDetailPage key={mailbox.id} id={mailbox.id!} />;
  if (match('/templates', path)) return <TemplatesPage />;
  if (match('/templates/new', path))
    return guarded('change', <TemplateEditorPage key="new" />, {
      title: 'New template',
      doing: 'add templates',
      back: { to: '/templates', label: 'Templates' },
    });
  const template = match('/templates/:id', path);
  if (template) return <TemplateEditorPage key={template.id} id={template.id} />;
  if (match('/reports', path)) return <ReportsPage />;
  const overview = { to: '/', label: 'Overview' };
  if (match('/webhooks', path))
    return guarded('manage', <WebhooksPage />, { title: 'Webhooks', doing: 'manage webhooks', back: overview });
  if (match('/team', path))
    return guarded('manage', <TeamPage />, { title: 'Team', doing: 'manage the team', back: overview });
  if (match('/alerts', path)) return <AlertsPage />;
  if (match('/placement-tests', path)) return <PlacementTestsPage />;
  if (match('/domains', path)) return <DomainsPage />;
  const domain = match('/domains/:domain', path);
  if (domain) return <DomainDetailPage key={domain.domain} domain={domain.domain!} />;
  return <NotFoundPage />;
}

/** Who is using the dashboard: nobody yet (setup or sign-in), an API key, or a signed-in person. */
type Auth =
  | { kind: 'checking' }
  | { kind: 'setup' }
  | { kind: 'signed-out'; reason?: string; withKey?: boolean }
  | { kind: 'key'; key: string; workspace?: string; role?: Role }
  | { kind: 'session'; session: SessionInfo };

function initialAuth(): Auth {
  const key = session.key();
  return key ? { kind: 'key', key } : { kind: 'checking' };
}

export function App() {
  const { path, query } = useLocation();
  const [auth, setAuth] = useState<Auth>(initialAuth);
  const [justSignedIn, setJustSignedIn] = useState(false);

  function signedIn(info: SessionInfo): void {
    session.signOut();
    setCsrfToken(info.csrfToken);
    setJustSignedIn(true);
    setAuth({ kind: 'session', session: info });
  }

  useEffect(
    () =>
      onUnauthorized(() => {
        setCsrfToken(null);
        setAuth((current) => {
          // a page's requests run side by side: the first refusal says why, the others change nothing
          if (current.kind === 'signed-out') return current;
          if (current.kind === 'key') {
            session.signOut();
            return {
              kind: 'signed-out',
              withKey: true,
              reason: 'Your API key is no longer accepted. Sign in again to continue.',
            };
          }
          return { kind: 'signed-out', reason: 'Your session has ended. Sign in again to continue.' };
        });
      }),
    [],
  );

  useEffect(() => {
    if (auth.kind === 'checking') {
      api.currentSession().then(
        (info) => {
          setCsrfToken(info.csrfToken);
          setAuth({ kind: 'session', session: info });
        },
        async () => {
          const status = await api.setupStatus().catch(() => ({ setupRequired: false, setupTokenRequired: false }));
          setAuth(status.setupRequired ? { kind: 'setup' } : { kind: 'signed-out' });
        },
      );
    } else if (auth.kind === 'key' && auth.role === undefined) {
      api.workspace().then(
        (answer) => setAuth({ kind: 'key', key: auth.key, workspace: answer.workspace.name, role: answer.role }),
        () => undefined,
      );
    }
  }, [auth]);

  const invite = match('/invite/:token', path);
  if (invite) {
    return (
      <>
        <AcceptInvitePage
          token={invite.token!}
          onAccepted={(info) => {
            signedIn(info);
            navigate('/', { replace: true });
          }}
        />
        <Toasts />
      </>
    );
  }

  if (auth.kind === 'checking') {
    return (
      <main id="main" class="signin">
        <Loading label="Loading" rows={1} />
      </main>
    );
  }

  if (auth.kind === 'setup') {
    return (
      <>
        <SetupPage onSetUp={signedIn} onUseApiKey={() => setAuth({ kind: 'signed-out', withKey: true })} />
        <Toasts />
      </>
    );
  }

  if (auth.kind === 'signed-out') {
    return (
      <>
        <SignInPage
          reason={auth.reason}
          withKey={auth.withKey}
          onSignedIn={signedIn}
          onKeySignedIn={(key, workspace, role) => {
            session.signIn(key);
            setJustSignedIn(true);
            setAuth({ kind: 'key', key, workspace, role });
          }}
        />
        <Toasts />
      </>
    );
  }

  const role = auth.kind === 'session' ? auth.session.role : auth.role;
  const workspace = auth.kind === 'session' ? auth.session.workspace : undefined;
  return (
    <RoleContext.Provider value={role ?? 'viewer'}>
      <Shell
        path={path}
        workspace={auth.kind === 'session' ? workspace?.name : auth.workspace}
        person={auth.kind === 'session' ? auth.session.user.name : undefined}
        workspaces={auth.kind === 'session' ? auth.session.workspaces : undefined}
        currentWorkspaceId={workspace?.id}
        onSwitchWorkspace={async (workspaceId) => {
          const info = await api.switchWorkspace(workspaceId);
          setAuth({ kind: 'session', session: info });
          navigate('/', { replace: true });
        }}
        focusOnStart={justSignedIn}
        onSignOut={async () => {
          if (auth.kind === 'session') await api.signOut().catch(() => undefined);
          session.signOut();
          setCsrfToken(null);
          setAuth({ kind: 'signed-out', withKey: auth.kind === 'key' });
          navigate('/', { replace: true });
        }}
      >
        {role === undefined ? (
          <Loading label="Loading" rows={2} />
        ) : role === null ? (
          <p>You belong to no workspace yet. Ask a workspace admin for an invite link.</p>
        ) : match('/oauth/confirm', path) ? (
          <OAuthConfirmPage flow={query.get('flow') ?? ''} withKey={auth.kind === 'key'} />
        ) : auth.kind === 'session' && match('/account', path) ? (
          <AccountPage
            onSignedOutEverywhere={() => {
              setCsrfToken(null);
              setAuth({ kind: 'signed-out' });
              navigate('/', { replace: true });
            }}
          />
        ) : auth.kind === 'session' && match('/peers', path) ? (
          <PeersPage />
        ) : (
          <Page key={workspace?.id ?? 'key'} path={path} role={role} />
        )}
      </Shell>
      <Toasts />
    </RoleContext.Provider>
  );
}
