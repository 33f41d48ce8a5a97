import { useState } from 'preact/hooks';
import type { PlacementTest } from '../api.js';
import { api } from '../api.js';
import { IconRefresh } from '../components/icons.js';
import { Badge, Button, Card, EmptyState, ErrorBox, Loading, PageHeader } from '../components/ui.js';
import { SelectField, TextAreaField, TextField } from '../components/fields.js';
import { formatDateTime } from '../format.js';
import { useResource, useTitle } from '../hooks.js';
import { useCanEdit } from '../access.js';

const STATUS_TONES: Record<string, 'green' | 'blue' | 'red' | 'neutral'> = {
  queued: 'neutral',
  sending: 'blue',
  waiting: 'blue',
  completed: 'green',
  failed: 'red',
};
const COLUMNS = ['inbox', 'promotions', 'spam', 'other', 'missing', 'pending'] as const;

type ProviderRow = PlacementTest['providers'][number];
type Seed = PlacementTest['seeds'][number];

/** What the receivers said of the copies found, per provider: '–' where nothing was found or said. */
const VERDICT_COLUMNS: Array<{ title: string; value: (row: ProviderRow) => string }> = [
  { title: 'SPF pass', value: (row) => share(row.verdicts.spfPass) },
  { title: 'DKIM pass', value: (row) => share(row.verdicts.dkimPass) },
  { title: 'DMARC pass', value: (row) => share(row.verdicts.dmarcPass) },
  {
    title: 'Spam score',
    value: (row) => (row.verdicts.averageSpamScore === null ? '–' : String(row.verdicts.averageSpamScore)),
  },
];

function share(value: number | null): string {
  return value === null ? '–' : `${value}%`;
}

/** "SPF pass, DKIM fail, DMARC fail, spam score 0.4" as the seed's receiver wrote it. */
function seedVerdict(seed: Seed): string {
  const verdict = seed.verdict;
  if (!verdict) return seed.placement === 'missing' ? 'not found' : 'not found yet';
  const parts = [
    `SPF ${verdict.spf ?? 'not said'}`,
    `DKIM ${verdict.dkim ?? 'not said'}`,
    `DMARC ${verdict.dmarc ?? 'not said'}`,
  ];
  if (verdict.spamScore !== null) parts.push(`spam score ${verdict.spamScore}`);
  if (verdict.scl !== null) parts.push(`SCL ${verdict.scl}`);
  return parts.join(', ');
}

function NewPlacementTest({ onCreated }: { onCreated: () => void }) {
  const senders = useResource(() => api.mailboxes({ status: 'active', limit: 100 }), []);
  const [sender, setSender] = useState('');
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>();
  const options = (senders.data?.mailboxes ?? []).map((m) => ({ value: m.id, label: m.email }));
  const senderId = sender || options[0]?.value || '';

  async function onSubmit(event: Event) {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    try {
      await api.createPlacementTest({ senderMailboxId: senderId, subject: subject.trim(), text: body });
      setSubject('');
      setBody('');
      onCreated();
    } catch (failure) {
      setError(failure);
    } finally {
      setSaving(false);
    }
  }

  return (
    <Card
      title="Test your own email"
      subtitle="Sent once to up to 10 mailboxes of your pool across providers; each copy counts as a send of the sender's day"
    >
      <form onSubmit={onSubmit} class="stack">
        <SelectField label="Sender" value={senderId} onValue={setSender} options={options} />
        <TextField label="Subject" required value={subject} onValue={setSubject} />
        <TextAreaField label="Body" required rows={8} value={body} onValue={setBody} />
        {error !== undefined && <ErrorBox error={error} title="The test was not started" />}
        <div>
          <Button type="submit" variant="primary" loading={saving} disabled={!senderId}>
            Run placement test
          </Button>
        </div>
      </form>
    </Card>
  );
}

function PlacementTestCard({ test }: { test: PlacementTest }) {
  return (
    <Card
      title={test.subject}
      subtitle={`From ${test.sender.email}, ${formatDateTime(test.createdAt)}`}
      actions={<Badge tone={STATUS_TONES[test.status] ?? 'neutral'}>{test.status}</Badge>}
    >
      {test.lastError && <p class="muted">{test.lastError}</p>}
      {/* focusable: with the receivers' columns the table scrolls sideways on a laptop */}
      <div class="table-wrap" tabIndex={0} role="region" aria-label={`Per provider: “${test.subject}”`}>
        <table class="table responsive-table">
          <caption class="visually-hidden">Where the copies of “{test.subject}” landed, per provider</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              {COLUMNS.map((column) => (
                <th scope="col" key={column}>
                  {column}
                </th>
              ))}
              {VERDICT_COLUMNS.map((column) => (
                <th scope="col" key={column.title}>
                  {column.title}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {test.providers.map((row) => (
              <tr key={row.provider}>
                <th scope="row">{row.provider}</th>
                {COLUMNS.map((column) => (
                  <td key={column} data-label={column}>
                    {row[column]}
                  </td>
                ))}
                {VERDICT_COLUMNS.map((column) => (
                  <td key={column.title} data-label={column.title}>
                    {column.value(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <details class="chart-data">
        <summary>Each seed and what its receiver said</summary>
        <ul class="plain-list">
          {test.seeds.map((seed) => (
            <li key={seed.mailbox.id}>
              <strong>{seed.mailbox.email}</strong> ({seed.provider}): {seed.placement ?? 'looked for'} —{' '}
              {seedVerdict(seed)}
            </li>
          ))}
        </ul>
      </details>
    </Card>
  );
}

export function PlacementTestsPage() {
  useTitle('Placement tests');
  const list = useResource(() => api.placementTests(), []);
  const canEdit = useCanEdit();
  return (
    <div class="stack">
      <PageHeader
        title="Placement tests"
        subtitle="Where your real campaign lands: inbox, promotions or spam, per provider"
        actions={
          <Button size="sm" icon={<IconRefresh size={14} />} onClick={list.reload}>
            Refresh
          </Button>
        }
      />
      {canEdit && <NewPlacementTest onCreated={list.reload} />}
      {list.error && <ErrorBox error={list.error} onRetry={list.reload} title="The placement tests did not load" />}
      {!list.data && !list.error && <Loading label="Loading placement tests" />}
      {list.data && list.data.placementTests.length === 0 && (
        // Without the form's card above it (a viewer), it is the first heading under the page's h1.
        <EmptyState title="No placement tests yet" level={canEdit ? 3 : 2}>
          {canEdit ? 'Run one above with your own subject and body.' : 'A member of the workspace can run one.'}
        </EmptyState>
      )}
      {list.data?.placementTests.map((test) => (
        <PlacementTestCard key={test.id} test={test} />
      ))}
    </div>
  );
}
