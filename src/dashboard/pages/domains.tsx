import { useState } from 'preact/hooks';
import type { DmarcDomains, DmarcSource, Mailbox } from '../api.js';
import { api } from '../api.js';
import { useIsAdmin } from '../access.js';
import { ALIGNED_LEGEND, AlignedShare } from '../components/dmarc-figures.js';
import { SelectField, TextField } from '../components/fields.js';
import { IconRefresh } from '../components/icons.js';
import { toast } from '../components/toasts.js';
import { Button, Card, EmptyState, ErrorBox, Link, Loading, Notice, PageHeader } from '../components/ui.js';
import { countNoun, formatDay, formatNumber, relativeTime } from '../format.js';
import { useResource, useTitle } from '../hooks.js';

/** Where the how-to lives: the dashboard does not serve the docs, so it is named, not linked. */
const HOW_TO = (
  <>
    the how-to <em>Read your domain's DMARC reports</em> in Warmup's docs (<code>docs/how-to/dmarc-reports.md</code>)
  </>
);

/** The mailbox and folder the reports arrive in, with the workspace's mailboxes to choose from. */
function useReportSource() {
  return useResource(async () => {
    const [source, list] = await Promise.all([api.dmarcSource(), api.mailboxes({ limit: 100 })]);
    const mailboxes = list.mailboxes;
    // the named mailbox may lie beyond the first page of the list
    if (source && !mailboxes.some((m) => m.id === source.mailboxId)) {
      const named = await api.mailbox(source.mailboxId).catch(() => undefined);
      if (named) mailboxes.push(named);
    }
    return { source, mailboxes };
  }, []);
}

function SourceForm({
  source,
  mailboxes,
  onSaved,
}: {
  source: DmarcSource | null;
  mailboxes: Mailbox[];
  onSaved: () => void;
}) {
  const [mailboxId, setMailboxId] = useState(source?.mailboxId ?? mailboxes[0]?.id ?? '');
  const [folder, setFolder] = useState(source?.folder ?? 'INBOX');
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>();

  async function onSubmit(event: Event) {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    try {
      await api.setDmarcSource({ mailboxId, folder: folder.trim() });
      toast('Report mailbox saved: it is read within 15 minutes');
      onSaved();
    } catch (failure) {
      setError(failure);
    } finally {
      setSaving(false);
    }
  }

  if (mailboxes.length === 0)
    return <p class="muted">Connect the mailbox the reports arrive in first, then name it here.</p>;
  return (
    <form onSubmit={onSubmit} class="stack">
      <SelectField
        label="Report mailbox"
        value={mailboxId}
        onValue={setMailboxId}
        options={mailboxes.map((m) => ({ value: m.id, label: m.email }))}
      />
      <TextField
        label="Folder"
        required
        value={folder}
        onValue={setFolder}
        hint="The folder the reports are delivered or filed to, such as INBOX or DMARC"
      />
      {error !== undefined && <ErrorBox error={error} title="The report mailbox was not saved" />}
      <div>
        <Button type="submit" variant="primary" loading={saving} disabled={!mailboxId}>
          Save report mailbox
        </Button>
      </div>
    </form>
  );
}

/** Where the reports come from, in words; the form to name it for owners and admins. */
function SourceCard({
  source,
  mailboxes,
  onSaved,
}: {
  source: DmarcSource | null;
  mailboxes: Mailbox[];
  onSaved: () => void;
}) {
  const admin = useIsAdmin();
  const email = mailboxes.find((m) => m.id === source?.mailboxId)?.email ?? 'a mailbox no longer listed';
  return (
    <Card
      title="Where the reports arrive"
      subtitle="The mailbox and folder your domains' DMARC aggregate reports (rua) are delivered to"
    >
      <div class="stack">
        {source ? (
          <p>
            Reports are read from <strong>{email}</strong>, folder <strong>{source.folder}</strong>; last read{' '}
            {relativeTime(source.checkedAt)}.
          </p>
        ) : (
          <p>No report mailbox is named yet.</p>
        )}
        {source?.lastError && (
          <Notice tone="warning" title="The last read failed">
            {source.lastError}
          </Notice>
        )}
        {admin ? (
          <SourceForm
            key={`${source?.mailboxId}/${source?.folder}`}
            source={source}
            mailboxes={mailboxes}
            onSaved={onSaved}
          />
        ) : (
          <p class="muted">Owners and admins name the report mailbox.</p>
        )}
      </div>
    </Card>
  );
}

function SetAside({ setAside }: { setAside: DmarcDomains['setAside'] }) {
  if (setAside.count === 0) return null;
  return (
    <Card
      title="Reports set aside"
      subtitle={`${countNoun(setAside.count, 'report messages')} could not be read and changed nothing`}
    >
      <ul class="plain-list">
        {setAside.reasons.map((reason) => (
          <li key={reason.code}>
            <strong>{reason.code}</strong> ({formatNumber(reason.count)}): {reason.latest}
          </li>
        ))}
      </ul>
    </Card>
  );
}

function DomainsTable({ figures }: { figures: DmarcDomains }) {
  return (
    <Card
      title="Domains"
      subtitle={`${formatDay(figures.from)} – ${formatDay(figures.to)}, as the receivers reported it`}
    >
      <div class="table-wrap" tabIndex={0} role="region" aria-label="DMARC figures per domain">
        <table class="table responsive-table">
          <caption class="visually-hidden">The DMARC reports of the last 30 days, per domain</caption>
          <thead>
            <tr>
              <th scope="col">Domain</th>
              <th scope="col">Messages</th>
              <th scope="col">Aligned</th>
              <th scope="col">Sources</th>
              <th scope="col">Reports</th>
              <th scope="col">Last report</th>
            </tr>
          </thead>
          <tbody>
            {figures.domains.map((row) => (
              <tr key={row.domain}>
                <th scope="row">
                  <Link to={`/domains/${encodeURIComponent(row.domain)}`}>{row.domain}</Link>
                </th>
                <td data-label="Messages">{formatNumber(row.messages)}</td>
                <td data-label="Aligned">
                  <AlignedShare share={row.alignedShare} />
                </td>
                <td data-label="Sources">{formatNumber(row.sources)}</td>
                <td data-label="Reports">{formatNumber(row.reports)}</td>
                <td data-label="Last report">{relativeTime(row.lastReportAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">{ALIGNED_LEGEND}.</p>
    </Card>
  );
}

export function DomainsPage() {
  useTitle('Domains');
  const figures = useResource(() => api.dmarcDomains(), []);
  const source = useReportSource();
  const reload = () => {
    figures.reload();
    source.reload();
  };
  const named = source.data?.source;
  const mailbox = source.data?.mailboxes.find((m) => m.id === named?.mailboxId);

  return (
    <div class="stack">
      <PageHeader
        title="Domains"
        subtitle="What the mailbox providers' DMARC reports say of your domains over the last 30 days"
        actions={
          <Button size="sm" icon={<IconRefresh size={14} />} onClick={reload}>
            Refresh
          </Button>
        }
      />
      {figures.error && <ErrorBox error={figures.error} onRetry={figures.reload} title="The domains did not load" />}
      {!figures.data && !figures.error && <Loading label="Loading domains" />}
      {figures.data && figures.data.domains.length === 0 && (
        <EmptyState title="No DMARC reports yet" level={2}>
          {named && mailbox ? (
            <>
              Reports are read from {mailbox.email}, folder {named.folder}. Point the <code>rua</code> tag of each
              domain's DMARC record (the TXT record at <code>_dmarc.yourdomain</code>) at {mailbox.email}; providers
              send a report a day, the first a day or two later. Every step is in {HOW_TO}.
            </>
          ) : (
            <>
              Name below the mailbox and folder your reports arrive in (for example <code>dmarc@yourdomain</code>,
              folder INBOX), then point the <code>rua</code> tag of each domain's DMARC record (the TXT record at{' '}
              <code>_dmarc.yourdomain</code>) at that address. Every step is in {HOW_TO}.
            </>
          )}
        </EmptyState>
      )}
      {figures.data && figures.data.domains.length > 0 && <DomainsTable figures={figures.data} />}
      {figures.data && <SetAside setAside={figures.data.setAside} />}
      {source.error && (
        <ErrorBox error={source.error} onRetry={source.reload} title="The report mailbox did not load" />
      )}
      {source.data && <SourceCard source={named ?? null} mailboxes={source.data.mailboxes} onSaved={reload} />}
    </div>
  );
}
