import { useEffect, useState } from 'preact/hooks';
import { api, type SessionInfo } from '../api.js';
import { AccountCard, formErrors } from '../components/account-form.js';
import { Button, ErrorBox } from '../components/ui.js';
import { TextField } from '../components/fields.js';
import { useTitle } from '../hooks.js';

/** The first run: the owner's account and the first workspace, before anyone can sign in. */
export function SetupPage({
  onSetUp,
  onUseApiKey,
}: {
  onSetUp: (session: SessionInfo) => void;
  onUseApiKey: () => void;
}) {
  useTitle('Set up Warmup');
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [workspaceName, setWorkspaceName] = useState('');
  // The log's link carries the token in the fragment, which no server sees.
  const [setupToken, setSetupToken] = useState(
    () => /(?:^#|&)setup-token=([A-Za-z0-9_-]+)/.exec(window.location.hash)?.[1] ?? '',
  );
  const [tokenRequired, setTokenRequired] = useState(false);
  useEffect(() => {
    api.setupStatus().then(
      (status) => setTokenRequired(status.setupTokenRequired),
      () => undefined,
    );
  }, []);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      onSetUp(
        await api.setUp({
          name: name.trim(),
          email: email.trim(),
          password,
          workspaceName: workspaceName.trim(),
          ...(setupToken.trim() ? { setupToken: setupToken.trim() } : {}),
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
      title="Set up Warmup"
      lead="Create the owner account and your first workspace. You can invite your team afterwards."
      help={
        <Button variant="ghost" size="sm" onClick={onUseApiKey}>
          Use an API key instead
        </Button>
      }
    >
      <form onSubmit={submit} noValidate class="stack">
        {error !== undefined && <ErrorBox error={error} title="Not set up" />}
        {(tokenRequired || fields.setupToken) && (
          <TextField
            label="Setup token"
            name="setupToken"
            autoComplete="off"
            hint="Printed in the server's log when it started: this server is reachable from other machines"
            value={setupToken}
            onValue={setSetupToken}
            error={fields.setupToken}
          />
        )}
        <TextField
          label="Your name"
          name="name"
          autoComplete="name"
          value={name}
          onValue={setName}
          error={fields.name}
          autoFocus
        />
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
          autoComplete="new-password"
          hint="At least 10 characters"
          value={password}
          onValue={setPassword}
          error={fields.password}
        />
        <TextField
          label="Workspace name"
          name="workspaceName"
          autoComplete="organization"
          hint="Your company or team; you can add more workspaces later"
          value={workspaceName}
          onValue={setWorkspaceName}
          error={fields.workspaceName}
        />
        <Button type="submit" variant="primary" loading={busy} class="btn-block">
          Create owner account
        </Button>
      </form>
    </AccountCard>
  );
}
