// Signing a mailbox in with Google or Microsoft: the buttons that send the browser to the
// provider's consent page (for a new mailbox, or to reconnect one whose access ended), and what
// the callback brought back when it failed.
import { useState } from 'preact/hooks';
import type { Mailbox, OAuthProviderId } from '../api.js';
import { api } from '../api.js';
import { useResource } from '../hooks.js';
import { IconRefresh } from './icons.js';
import { toast } from './toasts.js';
import { Button, Card, Notice, errorMessage } from './ui.js';

async function goToConsent(provider: OAuthProviderId, mailboxId?: string): Promise<void> {
  window.location.assign(await api.authorizeOAuth(provider, mailboxId));
}

/** "Connect with Microsoft" and the like, for each provider the operator set up; nothing when none is. */
export function OAuthConnectCard() {
  const providers = useResource(() => api.oauthProviders(), []);
  const [busy, setBusy] = useState<OAuthProviderId>();
  const failure = new URLSearchParams(window.location.search).get('oauth_error');
  if (!providers.data?.length && !failure) return null;
  return (
    <Card title="Sign in with your provider" subtitle="No app password: you approve access on the provider's own page.">
      {failure && (
        <Notice tone="error" title="The mailbox was not connected">
          {failure}
        </Notice>
      )}
      <div class="row-actions">
        {providers.data?.map((provider) => (
          <Button
            key={provider.id}
            variant="primary"
            loading={busy === provider.id}
            onClick={async () => {
              setBusy(provider.id);
              try {
                await goToConsent(provider.id);
              } catch (error) {
                toast(`Could not start the sign-in with ${provider.name}: ${errorMessage(error)}`, 'error');
                setBusy(undefined);
              }
            }}
          >
            Connect with {provider.name}
          </Button>
        ))}
      </div>
    </Card>
  );
}

/** For a mailbox that signs in with OAuth and stopped: consent again, keeping its history. */
export function ReconnectButton({ mailbox, compact }: { mailbox: Mailbox; compact?: boolean }) {
  const [busy, setBusy] = useState(false);
  if (mailbox.connectionType !== 'oauth2' || mailbox.oauthProvider === null || mailbox.status !== 'error') return null;
  const provider = mailbox.oauthProvider;
  return (
    <Button
      size="sm"
      variant={compact ? 'ghost' : 'primary'}
      loading={busy}
      icon={<IconRefresh size={16} />}
      aria-label={compact ? `Reconnect ${mailbox.email}` : undefined}
      title={compact ? 'Reconnect: sign in again' : undefined}
      onClick={async () => {
        setBusy(true);
        try {
          await goToConsent(provider, mailbox.id);
        } catch (error) {
          toast(`Could not start the reconnection of ${mailbox.email}: ${errorMessage(error)}`, 'error');
          setBusy(false);
        }
      }}
    >
      {compact ? undefined : 'Reconnect'}
    </Button>
  );
}
