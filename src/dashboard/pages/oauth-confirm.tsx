// Where a consent started with an API key comes back: whoever consented may not belong to the
// workspace, so a signed-in member sees which address would join which workspace and confirms.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { useResource, useTitle } from '../hooks.js';
import { navigate } from '../router.js';
import { Button, Card, ErrorBox, Loading, Notice, PageHeader } from '../components/ui.js';

export function OAuthConfirmPage({ flow, withKey }: { flow: string; withKey: boolean }) {
  useTitle('Confirm the mailbox');
  const pending = useResource(
    () => (withKey ? Promise.reject(new Error('not with a key')) : api.pendingOAuthConnection(flow)),
    [flow, withKey],
  );
  const [busy, setBusy] = useState<'confirm' | 'cancel'>();
  const [failure, setFailure] = useState<unknown>();

  async function act(kind: 'confirm' | 'cancel'): Promise<void> {
    setBusy(kind);
    setFailure(undefined);
    try {
      if (kind === 'confirm') {
        const mailbox = await api.confirmOAuthConnection(flow);
        navigate(`/mailboxes/${encodeURIComponent(mailbox.id)}`, { replace: true });
      } else {
        await api.cancelOAuthConnection(flow);
        navigate('/mailboxes', { replace: true });
      }
    } catch (error) {
      setFailure(error);
      setBusy(undefined);
    }
  }

  return (
    <>
      <PageHeader
        title="Confirm the mailbox connection"
        subtitle="A sign-in with a mail provider was started with an API key: a member of the workspace decides whether the mailbox joins it."
      />
      {withKey ? (
        <Notice tone="warning" title="Sign in with your account to confirm">
          An API key cannot confirm a connection. Sign out, then sign in as a member of the workspace that started it.
        </Notice>
      ) : pending.loading && !pending.data ? (
        <Loading label="Loading the connection" rows={2} />
      ) : pending.error || !pending.data ? (
        <>
          <ErrorBox title="Nothing to confirm here" error={pending.error} />
          <p>
            The link works once, for 10 minutes after the consent. If you belong to several workspaces, switch to the
            one that started the connection, then open the link again.
          </p>
        </>
      ) : (
        <Card title={`Connect ${pending.data.email} to workspace ${pending.data.workspace.name}?`}>
          <p>
            <strong>{pending.data.email}</strong> signed in with {pending.data.providerName} and allowed access to its
            mail. Confirm only if you expected this mailbox in <strong>{pending.data.workspace.name}</strong>
            {pending.data.mailboxId ? ' (it reconnects a mailbox already there)' : ''}; the confirmation works until{' '}
            {new Date(pending.data.expiresAt).toLocaleTimeString()}.
          </p>
          {failure !== undefined && <ErrorBox title="The mailbox was not connected" error={failure} />}
          <div class="row-actions">
            <Button
              variant="primary"
              loading={busy === 'confirm'}
              disabled={busy !== undefined}
              onClick={() => act('confirm')}
            >
              Confirm
            </Button>
            <Button loading={busy === 'cancel'} disabled={busy !== undefined} onClick={() => act('cancel')}>
              Cancel
            </Button>
          </div>
        </Card>
      )}
    </>
  );
}
