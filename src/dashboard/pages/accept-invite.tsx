import { useState } from 'preact/hooks';
import { api, type SessionInfo } from '../api.js';
import { AccountCard, formErrors, OidcSignInLink } from '../components/account-form.js';
import { Button, ErrorBox, Loading } from '../components/ui.js';
import { TextField } from '../components/fields.js';
import { useResource, useTitle } from '../hooks.js';

const ROLE_WORDS: Record<string, string> = {
  viewer: 'a viewer (reads reports, changes nothing)',
  member: 'a member (mailboxes and templates)',
  admin: 'an admin (also keys, webhooks and the team)',
  owner: 'an owner',
};

/** An invite link: join its workspace with a new account, or with an existing one's password. */
export function AcceptInvitePage({ token, onAccepted }: { token: string; onAccepted: (session: SessionInfo) => void }) {
  useTitle('Join a workspace');
  const invite = useResource(() => api.invite(token), [token]);
  const [hasAccount, setHasAccount] = useState(false);
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  if (invite.loading && !invite.data) {
    return (
      <AccountCard title="Join a workspace">
        <Loading label="Opening the invite" />
      </AccountCard>
    );
  }
  if (!invite.data) {
    return (
      <AccountCard title="This invite cannot be used">
        <ErrorBox error={invite.error} title="Invite not valid" />
        <p>Ask whoever invited you for a new link.</p>
      </AccountCard>
    );
  }

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      onAccepted(
        await api.acceptInvite(token, {
          email: email.trim(),
          password,
          ...(hasAccount ? {} : { name: name.trim() }),
        }),
      );
    } catch (failure) {
      const found = formErrors(failure);
      setFields(found.fields);
      if (found.message) setError(failure);
      setBusy(false);
    }
  }

  return (
    <AccountCard
      title={`Join ${invite.data.workspace.name}`}
      lead={`You are invited as ${ROLE_WORDS[invite.data.role] ?? invite.data.role}.`}
      help={
        <Button variant="ghost" size="sm" onClick={() => setHasAccount(!hasAccount)}>
          {hasAccount ? 'I need a new account' : 'I already have an account'}
        </Button>
      }
    >
      <form onSubmit={submit} noValidate class="stack">
        {error !== undefined && <ErrorBox error={error} title="Not joined" />}
        {!hasAccount && (
          <TextField
            label="Your name"
            name="name"
            autoComplete="name"
            value={name}
            onValue={setName}
            error={fields.name}
            autoFocus
          />
        )}
        <TextField
          label="Email"
          name="email"
          type="email"
          autoComplete="username"
          value={email}
          onValue={setEmail}
          error={fields.email}
        />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete={hasAccount ? 'current-password' : 'new-password'}
          hint={hasAccount ? undefined : 'At least 10 characters'}
          value={password}
          onValue={setPassword}
          error={fields.password}
        />
        <Button type="submit" variant="primary" loading={busy} class="btn-block">
          {hasAccount ? 'Sign in and join' : 'Create account and join'}
        </Button>
      </form>
      <OidcSignInLink invite={token} label={(provider) => `Join with ${provider}`} />
    </AccountCard>
  );
}
