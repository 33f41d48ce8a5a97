import { useState } from 'preact/hooks';
import type { Alerts, Webhook } from '../api.js';
import { api } from '../api.js';
import { useCanEdit, useIsAdmin } from '../access.js';
import { IconPlus, IconTrash } from '../components/icons.js';
import { EVENT_LABELS } from '../components/event-labels.js';
import { toast } from '../components/toasts.js';
import { Badge, Button, Card, ErrorBox, Loading, Notice, PageHeader, errorMessage } from '../components/ui.js';
import { CheckboxField, SelectField, TextField } from '../components/fields.js';
import { useResource, useSubmit, useTitle } from '../hooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/webhooks.schemas.js';

const CHAT_NAMES: Record<string, string> = { slack: 'Slack', teams: 'Microsoft Teams' };

function EventChoice({ events, onEvents }: { events: string[]; onEvents: (events: string[]) => void }) {
  return (
    <fieldset class="stack">
      <legend>Events</legend>
      {WEBHOOK_EVENT_TYPES.map((type) => (
        <CheckboxField
          key={type}
          label={EVENT_LABELS[type] ?? type}
          hint={<code>{type}</code>}
          checked={events.includes(type)}
          onChecked={(checked) => onEvents(checked ? [...events, type] : events.filter((t) => t !== type))}
        />
      ))}
    </fieldset>
  );
}

/** What a viewer sees instead of the checkboxes: the chosen events, as a list. */
function EventList({ events }: { events: string[] }) {
  if (events.length === 0) return <p class="muted">None.</p>;
  return (
    <ul>
      {events.map((type) => (
        <li key={type}>{EVENT_LABELS[type] ?? type}</li>
      ))}
    </ul>
  );
}

function EmailAlerts({ alerts, onSaved }: { alerts: Alerts; onSaved: (alerts: Alerts) => void }) {
  const admin = useIsAdmin();
  const { email } = alerts;
  const [events, setEvents] = useState<string[]>(email.events);
  const [testing, setTesting] = useState(false);

  const {
    busy: saving,
    error,
    submit: onSubmit,
  } = useSubmit(async () => {
    onSaved(await api.setEmailAlerts(events));
    toast(events.length === 0 ? 'Email alerts turned off' : 'Email alerts saved');
  });

  async function onTest() {
    setTesting(true);
    try {
      await api.testEmailAlerts();
      toast('Test email queued: it goes out within seconds');
    } catch (failure) {
      toast(`The test was not sent: ${errorMessage(failure)}`, 'error');
    } finally {
      setTesting(false);
    }
  }

  const subtitle = `Mailed to the workspace's ${email.recipients} owner${email.recipients === 1 ? '' : 's'} and admin${email.recipients === 1 ? '' : 's'}, with what happened and the fix`;
  if (!email.available) {
    return (
      <Card title="Email alerts" subtitle={subtitle}>
        <Notice tone="warning" title="Email alerts are unavailable">
          {email.unavailableReason}
        </Notice>
      </Card>
    );
  }
  if (!admin) {
    return (
      <Card title="Email alerts" subtitle={subtitle}>
        <div class="stack">
          <EventList events={email.events} />
        </div>
      </Card>
    );
  }
  return (
    <Card title="Email alerts" subtitle={subtitle}>
      <form onSubmit={onSubmit} class="stack">
        <EventChoice events={events} onEvents={setEvents} />
        {error !== undefined && <ErrorBox error={error} title="The email alerts were not saved" />}
        <div class="row">
          <Button type="submit" variant="primary" loading={saving}>
            Save email alerts
          </Button>
          <Button onClick={onTest} loading={testing}>
            Send test email
          </Button>
        </div>
      </form>
    </Card>
  );
}

function AddChat({ onAdded }: { onAdded: () => void }) {
  const [kind, setKind] = useState<'slack' | 'teams'>('slack');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['mailbox.error', 'mailbox.recovered']);

  const {
    busy: saving,
    error,
    submit: onSubmit,
  } = useSubmit(async () => {
    await api.createWebhook({ kind, url: url.trim(), events });
    setUrl('');
    toast(`${CHAT_NAMES[kind]} channel added`);
    onAdded();
  });

  return (
    <Card title="Add a Slack or Teams channel" subtitle="Paste the channel's incoming webhook URL; it is kept secret">
      <form onSubmit={onSubmit} class="stack">
        <SelectField
          label="Chat"
          value={kind}
          onValue={(value) => setKind(value as 'slack' | 'teams')}
          options={[
            { value: 'slack', label: 'Slack' },
            { value: 'teams', label: 'Microsoft Teams' },
          ]}
        />
        <TextField label="Incoming webhook URL" required value={url} onValue={setUrl} placeholder="https://" />
        <EventChoice events={events} onEvents={setEvents} />
        {error !== undefined && <ErrorBox error={error} title="The channel was not added" />}
        <div>
          <Button
            type="submit"
            variant="primary"
            icon={<IconPlus size={16} />}
            loading={saving}
            disabled={events.length === 0}
          >
            Add channel
          </Button>
        </div>
      </form>
    </Card>
  );
}

function ChatCard({ destination, onDeleted }: { destination: Webhook; onDeleted: () => void }) {
  const admin = useIsAdmin();
  const [busy, setBusy] = useState<'test' | 'delete'>();
  const name = `${CHAT_NAMES[destination.kind] ?? destination.kind}: ${destination.url}`;

  async function onTest() {
    setBusy('test');
    try {
      await api.testWebhook(destination.id);
      toast('Test message queued: it goes out within seconds');
    } catch (error) {
      toast(`The test was not sent: ${errorMessage(error)}`, 'error');
    } finally {
      setBusy(undefined);
    }
  }

  async function onDelete() {
    setBusy('delete');
    try {
      await api.deleteWebhook(destination.id);
      toast('Channel removed');
      onDeleted();
    } catch (error) {
      toast(`The channel was not removed: ${errorMessage(error)}`, 'error');
      setBusy(undefined);
    }
  }

  return (
    <Card
      title={name}
      actions={
        admin ? (
          <>
            <Button size="sm" onClick={onTest} loading={busy === 'test'}>
              Send test message
            </Button>
            <Button
              size="sm"
              variant="danger-ghost"
              icon={<IconTrash size={14} />}
              onClick={onDelete}
              loading={busy === 'delete'}
              aria-label={`Remove ${name}`}
            />
          </>
        ) : undefined
      }
    >
      <div class="stack">
        <div>
          <Badge tone={destination.enabled ? 'green' : 'blue'}>{destination.enabled ? 'on' : 'off'}</Badge>
        </div>
        <EventList events={destination.events} />
      </div>
    </Card>
  );
}

export function AlertsPage() {
  useTitle('Alerts');
  const admin = useIsAdmin();
  // A viewer already has the shell's view-only notice above every page; this one is for members.
  const memberOnly = useCanEdit() && !admin;
  const alerts = useResource(() => api.alerts(), []);

  return (
    <div class="stack">
      <PageHeader
        title="Alerts"
        subtitle="Hear about a stopped mailbox, a failing DNS record or a reply by email, Slack or Teams"
      />
      {memberOnly && (
        <Notice title="View only">Owners and admins choose the alerts; your role lets you see them.</Notice>
      )}
      {alerts.error && <ErrorBox error={alerts.error} onRetry={alerts.reload} title="The alerts did not load" />}
      {!alerts.data && !alerts.error && <Loading label="Loading alerts" />}
      {alerts.data && (
        <>
          <EmailAlerts alerts={alerts.data} onSaved={alerts.reload} />
          <h2>Slack and Teams</h2>
          {admin && <AddChat onAdded={alerts.reload} />}
          {alerts.data.destinations.length === 0 ? (
            <p class="muted">No Slack or Teams channel yet.</p>
          ) : (
            alerts.data.destinations.map((destination) => (
              <ChatCard key={destination.id} destination={destination} onDeleted={alerts.reload} />
            ))
          )}
        </>
      )}
    </div>
  );
}
