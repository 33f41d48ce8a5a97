import { useEffect, useState } from 'preact/hooks';
import { api, onUnauthorized, session } from './api.js';
import { Shell } from './components/shell.js';
import { Toasts } from './components/toasts.js';
import { match, navigate, useLocation } from './router.js';
import { MailboxDetailPage } from './pages/mailbox-detail.js';
import { AddMailboxPage } from './pages/mailbox-form.js';
import { ImportMailboxesPage } from './pages/mailbox-import.js';
import { MailboxesPage } from './pages/mailboxes.js';
import { NotFoundPage } from './pages/not-found.js';
import { OverviewPage } from './pages/overview.js';
import { ReportsPage } from './pages/reports.js';
import { SignInPage } from './pages/sign-in.js';
import { TemplateEditorPage } from './pages/template-editor.js';
import { TemplatesPage } from './pages/templates.js';
import { WebhooksPage } from './pages/webhooks.js';
import { PlacementTestsPage } from './pages/placement-tests.js';

function Page({ path }: { path: string }) {
  if (path === '/' || path === '') return <OverviewPage />;
  if (match('/mailboxes', path)) return <MailboxesPage />;
  if (match('/mailboxes/new', path)) return <AddMailboxPage />;
  if (match('/mailboxes/import', path)) return <ImportMailboxesPage />;
  const mailbox = match('/mailboxes/:id', path);
  if (mailbox) return <MailboxDetailPage key={mailbox.id} id={mailbox.id!} />;
  if (match('/templates', path)) return <TemplatesPage />;
  if (match('/templates/new', path)) return <TemplateEditorPage key="new" />;
  const template = match('/templates/:id', path);
  if (template) return <TemplateEditorPage key={template.id} id={template.id} />;
  if (match('/reports', path)) return <ReportsPage />;
  if (match('/webhooks', path)) return <WebhooksPage />;
  if (match('/placement-tests', path)) return <PlacementTestsPage />;
  return <NotFoundPage />;
}

export function App() {
  const { path } = useLocation();
  const [key, setKey] = useState(session.key());
  const [workspace, setWorkspace] = useState<string>();
  const [signOutReason, setSignOutReason] = useState<string>();
  const [justSignedIn, setJustSignedIn] = useState(false);

  useEffect(
    () =>
      onUnauthorized(() => {
        session.signOut();
        setKey(null);
        setSignOutReason('Your API key is no longer accepted. Sign in again to continue.');
      }),
    [],
  );

  useEffect(() => {
    if (!key) return;
    api.workspace().then(
      (answer) => setWorkspace(answer.workspace.name),
      () => setWorkspace(undefined),
    );
  }, [key]);

  if (!key) {
    return (
      <>
        <SignInPage
          reason={signOutReason}
          onSignedIn={(newKey, name) => {
            session.signIn(newKey);
            setWorkspace(name);
            setSignOutReason(undefined);
            setJustSignedIn(true);
            setKey(newKey);
          }}
        />
        <Toasts />
      </>
    );
  }

  return (
    <>
      <Shell
        path={path}
        workspace={workspace}
        focusOnStart={justSignedIn}
        onSignOut={() => {
          session.signOut();
          setKey(null);
          setWorkspace(undefined);
          setSignOutReason(undefined);
          navigate('/', { replace: true });
        }}
      >
        <Page path={path} />
      </Shell>
      <Toasts />
    </>
  );
}
