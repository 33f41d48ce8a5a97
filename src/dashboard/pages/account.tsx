import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { formErrors } from '../components/account-form.js';
import { toast } from '../components/toasts.js';
import { Button, Card, ErrorBox, Link, PageHeader } from '../components/ui.js';
import { TextField } from '../components/fields.js';
import { useTitle } from '../hooks.js';

/** The signed-in person's own account: a new password, and signing out of every browser. */
export function AccountPage({ onSignedOutEverywhere }: { onSignedOutEverywhere: () => void }) {
  useTitle('Your account');
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      await api.changePassword({ currentPassword, newPassword });
      setCurrentPassword('');
      setNewPassword('');
      toast('Password changed; your other sessions were signed out');
    } catch (failure) {
      const found = formErrors(failure);
      setFields(found.fields);
      if (found.message) setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <PageHeader title="Your account" />
      <div class="stack">
        <Card title="Change your password" subtitle="Every other browser you are signed in with is signed out">
          <form onSubmit={submit} noValidate class="stack">
            {error !== undefined && <ErrorBox error={error} title="The password was not changed" />}
            <TextField
              label="Current password"
              name="currentPassword"
              type="password"
              autoComplete="current-password"
              value={currentPassword}
              onValue={setCurrentPassword}
              error={fields.currentPassword}
            />
            <TextField
              label="New password"
              name="newPassword"
              type="password"
              autoComplete="new-password"
              hint="At least 10 characters"
              value={newPassword}
              onValue={setNewPassword}
              error={fields.newPassword}
            />
            <div>
              <Button type="submit" variant="primary" loading={busy}>
                Change password
              </Button>
            </div>
          </form>
        </Card>
        <Card title="Sign out everywhere" subtitle="Every browser signed in as you, this one included">
          <div>
            <Button
              variant="danger"
              onClick={async () => {
                await api.signOutEverywhere();
                onSignedOutEverywhere();
              }}
            >
              Sign out everywhere
            </Button>
          </div>
        </Card>
        <Card title="Peering" subtitle="For the person who set this installation up">
          <p>
            <Link to="/peers">Peers</Link>: installations that warm each other's mailboxes, this one's key, and adding,
            pausing or removing one.
          </p>
        </Card>
      </div>
    </>
  );
}
