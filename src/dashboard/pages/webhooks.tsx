import { useState } from 'preact/hooks';
import type { Webhook, WebhookDelivery } from '../api.js';
import { api } from '../api.js';
import { IconPlus, IconRefresh, IconTrash } from '../components/icons.js';
import { toast } from '../components/toasts.js';
import {
  Badge,
  Button,
  Card,
  EmptyState,
  ErrorBox,
  Loading,
  Notice,
  PageHeader,
  errorMessage,
} from '../components/ui.js';
import { CheckboxField, TextField } from '../components/fields.js';
import { EVENT_LABELS } from '../components/event-labels.js';
import { formatDateTime } from '../format.js';
import { useResource, useSubmit, useTitle } from '../hooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/webhooks.schemas.js';

const STATUS_TONES: Record<string, 'green' | 'blue' | 'red'> = { delivered: 'green', pending: 'blue', failed: 'red' };

function AddWebhook({ onAdded }: { onAdded: (secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['mailbox.error', 'mailbox.recovered']);

  const {
    busy: saving,
    error,
    submit: onSubmit,
  } = useSubmit(async () => {
    const { secret } = await api.createWebhook({ url: url.trim(), events });
    setUrl('');
    onAdded(secret ?? '');
  });

  return (
    <Card title="Add an endpoint" subtitle="Events are POSTed as JSON and signed per Standard Webhooks">
      <form onSubmit={onSubmit} class="stack">
        <TextField label="Endpoint URL" required value={url} onValue={setUrl} placeholder="https://" />
        <fieldset class="stack">
          <legend>Events</legend>
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <CheckboxField
              key={type}
              label={EVENT_LABELS[type] ?? type}
              hint={<code>{type}</code>}
              checked={events.includes(type)}
              onChecked={(checked) =>
                setEvents((current) => (checked ? [...current, type] : current.filter((t) => t !== type)))
              }
            />
          ))}
        </fieldset>
        {error !== undefined && <ErrorBox error={error} title="The endpoint was not added" />}
        <div>
          <Button
            type="submit"
            variant="primary"
            icon={<IconPlus size={16} />}
            loading={saving}
            disabled={events.length === 0}
          >
            Add endpoint
          </Button>
        </div>
      </form>
    </Card>
  );
}

function Deliveries({ webhook }: { webhook: Webhook }) {
  const list = useResource(() => api.webhookDeliveries(webhook.id), [webhook.id]);
  if (list.error) return <ErrorBox error={list.error} onRetry={list.reload} title="The delivery log did not load" />;
  if (!list.data) return <Loading label="Loading deliveries" rows={2} />;
  const rows: WebhookDelivery[] = list.data.deliveries;
  return (
    <div class="stack">
      <div>
        <Button size="sm" icon={<IconRefresh size={14} />} onClick={list.reload}>
          Refresh log
        </Button>
      </div>
      {rows.length === 0 ? (
        <p class="muted">Nothing sent yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="table responsive-table">
            <caption class="visually-hidden">Deliveries to {webhook.url}</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((delivery) => {
                const last = delivery.attemptLog[delivery.attemptLog.length - 1];
                return (
                  <tr key={delivery.id}>
                    <td>{formatDateTime(delivery.createdAt)}</td>
                    <td>
                      <code>{delivery.eventType}</code>
                    </td>
                    <td>
                      <Badge tone={STATUS_TONES[delivery.status] ?? 'blue'}>{delivery.status}</Badge>
                    </td>
                    <td>{delivery.attempts}</td>
                    <td>{last ? (last.statusCode ?? last.error ?? '') : 'not tried yet'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function WebhookCard({ webhook, onDeleted }: { webhook: Webhook; onDeleted: () => void }) {
  const [testing, setTesting] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [logVersion, setLogVersion] = useState(0);

  async function onTest() {
    setTesting(true);
    try {
      await api.testWebhook(webhook.id);
      toast('Test event queued: it goes out within seconds');
      setLogVersion((v) => v + 1);
    } catch (error) {
      toast(`The test was not sent: ${errorMessage(error)}`, 'error');
    } finally {
      setTesting(false);
    }
  }

  async function onDelete() {
    setDeleting(true);
    try {
      await api.deleteWebhook(webhook.id);
      toast('Endpoint deleted');
      onDeleted();
    } catch (error) {
      toast(`The endpoint was not deleted: ${errorMessage(error)}`, 'error');
      setDeleting(false);
    }
  }

  return (
    <Card
      title={webhook.url}
      subtitle={webhook.events.join(', ')}
      actions={
        <>
          <Button size="sm" onClick={onTest} loading={testing}>
            Send test event
          </Button>
          <Button
            size="sm"
            variant="danger-ghost"
            icon={<IconTrash size={14} />}
            onClick={onDelete}
            loading={deleting}
            aria-label={`Delete ${webhook.url}`}
          />
        </>
      }
    >
      <Deliveries key={logVersion} webhook={webhook} />
    </Card>
  );
}

export function WebhooksPage() {
  useTitle('Webhooks');
  const list = useResource(() => api.webhooks(), []);
  const [secret, setSecret] = useState<string>();

  return (
    <div class="stack">
      <PageHeader
        title="Webhooks"
        subtitle="Tell your own systems when a mailbox breaks, recovers or drops in reputation"
      />
      {secret && (
        <Notice tone="success" title="Endpoint added. Copy its signing secret now: it is shown only once.">
          <code class="secret">{secret}</code>
        </Notice>
      )}
      <AddWebhook
        onAdded={(newSecret) => {
          setSecret(newSecret);
          list.reload();
        }}
      />
      {list.error && <ErrorBox error={list.error} onRetry={list.reload} title="The endpoints did not load" />}
      {!list.data && !list.error && <Loading label="Loading endpoints" />}
      {list.data && list.data.length === 0 && (
        <EmptyState title="No endpoints yet">Add one above to have events delivered to it.</EmptyState>
      )}
      {list.data?.map((webhook) => (
        <WebhookCard key={webhook.id} webhook={webhook} onDeleted={list.reload} />
      ))}
    </div>
  );
}
