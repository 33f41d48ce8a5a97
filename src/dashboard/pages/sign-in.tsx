import { useState } from 'preact/hooks';
import { ApiError, api, type Role, type SessionInfo } from '../api.js';
import { AccountCard, formErrors, OidcSignInLink, takeOidcError } from '../components/account-form.js';
import { Button, ErrorBox } from '../components/ui.js';
import { TextField } from '../components/fields.js';
import { useTitle } from '../hooks.js';

/** Signing in with an API key: for scripts' keys, and installs that have no accounts yet. */
function ApiKeyForm({ onSignedIn }: { onSignedIn: (key: string, workspace: string, role: Role) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) {
      setError('Enter your API key.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api.workspace(trimmed);
      onSignedIn(trimmed, answer.workspace.name, answer.role);
    } catch (failure) {
      setError(
        failure instanceof ApiError && failure.status === 401
          ? 'That API key is not valid. Check it and try again.'
          : (failure as Error).message,
      );
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} noValidate>
      <TextField
        label="API key"
        name="apiKey"
        type="password"
        autoComplete="current-password"
        spellcheck={false}
        value={key}
        onValue={setKey}
        error={error}
        autoFocus
      />
      <Button type="submit" variant="primary" loading={busy} class="btn-block">
        Sign in
      </Button>
    </form>
  );
}

function PasswordForm({ onSignedIn }: { onSignedIn: (session: SessionInfo) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // a sign-in through the provider that was refused comes back here with the reason
  const [error, setError] = useState<unknown>(() => {
    const refused = takeOidcError();
    return refused === undefined ? undefined : new Error(refused);
  });
  const [fields, setFields] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      onSignedIn(await api.signIn({ email: email.trim(), password }));
    } catch (failure) {
      const found = formErrors(failure);
      setFields(found.fields);
      setError(
        failure instanceof ApiError && failure.status === 401
          ? new Error('The email or the password is not right.')
          : found.message && failure,
      );
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} noValidate class="stack">
      {error !== undefined && <ErrorBox error={error} title="Not signed in" />}
      <TextField
        label="Email"
        name="email"
        type="email"
        autoComplete="username"
        value={email}
        onValue={setEmail}
        error={fields.email}
        autoFocus
      />
      <TextField
        label="Password"
        name="password"
        type="password"
        autoComplete="current-password"
        value={password}
        onValue={setPassword}
        error={fields.password}
      />
      <Button type="submit" variant="primary" loading={busy} class="btn-block">
        Sign in
      </Button>
    </form>
  );
}

export function SignInPage({
  reason,
  withKey: startWithKey = false,
  onSignedIn,
  onKeySignedIn,
}: {
  reason?: string;
  /** Open on the API key form (the last sign-in used a key). */
  withKey?: boolean;
  onSignedIn: (session: SessionInfo) => void;
  onKeySignedIn: (key: string, workspace: string, role: Role) => void;
}) {
  useTitle('Sign in');
  const [withKey, setWithKey] = useState(startWithKey);
  return (
    <AccountCard
      title="Sign in"
      lead={
        withKey
          ? 'Use an API key of your workspace. The dashboard keeps it for this browser tab only.'
          : 'Sign in with your email and password.'
      }
      notice={reason}
      help={
        <Button variant="ghost" size="sm" onClick={() => setWithKey(!withKey)}>
          {withKey ? 'Use email and password instead' : 'Use an API key instead'}
        </Button>
      }
    >
      {withKey ? <ApiKeyForm onSignedIn={onKeySignedIn} /> : <PasswordForm onSignedIn={onSignedIn} />}
      {!withKey && <OidcSignInLink label={(provider) => `Sign in with ${provider}`} />}
    </AccountCard>
  );
}
