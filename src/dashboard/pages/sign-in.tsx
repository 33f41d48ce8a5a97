import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { Logo } from '../components/shell.js';
import { Button, Notice, TextField } from '../components/ui.js';
import { useTitle } from '../hooks.js';

export function SignInPage({
  reason,
  onSignedIn,
}: {
  reason?: string;
  onSignedIn: (key: string, workspace: string) => void;
}) {
  useTitle('Sign in');
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
      onSignedIn(trimmed, answer.workspace.name);
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
    <div class="signin">
      <main class="signin-card" id="main">
        <Logo />
        <h1>Sign in</h1>
        <p class="signin-lead">Use an API key of your workspace. The dashboard keeps it for this browser tab only.</p>
        {reason && <Notice tone="warning">{reason}</Notice>}
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
        <p class="signin-help">
          No key yet? Create a workspace with <code>npx warmup workspace create &lt;name&gt;</code>, or start the server
          with <code>WARMUP_API_KEY</code> set.
        </p>
      </main>
    </div>
  );
}
