// Many mailboxes at once: pick a CSV file, watch each row get checked, read what happened to each.
import { useState } from 'preact/hooks';
import type { ImportRowResult, MailboxImport } from '../api.js';
import { api, saveFile } from '../api.js';
import { IconUpload } from '../components/icons.js';
import { Badge, Button, Card, ErrorBox, Link, Notice, PageHeader, Progress } from '../components/ui.js';
import { useTitle } from '../hooks.js';

const COLUMNS =
  'email, name, provider, password, username, imap_host, imap_port, imap_secure, imap_username, smtp_host, smtp_port, smtp_secure, smtp_username, start_volume, ramp_up_increment, daily_limit, reply_rate, send_window_start, send_window_end, timezone, weekdays_only, language';

const TEMPLATE = `${COLUMNS.replace(/, /g, ',')}
jane@example.com,Jane Doe,gmail,abcd efgh ijkl mnop,,,,,,,,,,,,,,,,,,
sales@example.org,Sales Team,custom,the-mailbox-password,sales,mail.example.org,993,true,,mail.example.org,587,false,,,,,,,,,,
`;

const RESULT_BADGE: Record<ImportRowResult['result'], { tone: 'green' | 'blue' | 'red'; label: string }> = {
  created: { tone: 'green', label: 'Created' },
  exists: { tone: 'blue', label: 'Already there' },
  failed: { tone: 'red', label: 'Failed' },
};

/** Data rows in the file, for the progress bar (a quoted line break may make it a little high). */
function estimateRows(text: string): number {
  return Math.max(0, text.split(/\r?\n/).filter((line) => line.trim() !== '').length - 1);
}

function downloadTemplate(): void {
  saveFile(new Blob([TEMPLATE], { type: 'text/csv' }), 'mailboxes-import.csv');
}

export function ImportMailboxesPage() {
  useTitle('Import mailboxes');
  const [file, setFile] = useState<File | null>(null);
  const [running, setRunning] = useState(false);
  const [expected, setExpected] = useState(0);
  const [rows, setRows] = useState<ImportRowResult[]>([]);
  const [summary, setSummary] = useState<MailboxImport>();
  const [failure, setFailure] = useState<unknown>();

  async function start(event: Event) {
    event.preventDefault();
    if (!file || running) return;
    setRunning(true);
    setRows([]);
    setSummary(undefined);
    setFailure(undefined);
    try {
      const text = await file.text();
      setExpected(estimateRows(text));
      const result = await api.importMailboxes(text, (row) => setRows((seen) => [...seen, row]));
      setSummary(result);
      setRows(result.rows);
    } catch (error) {
      setFailure(error);
    } finally {
      setRunning(false);
    }
  }

  const shown = [...rows].sort((a, b) => a.line - b.line);
  const total = summary?.total ?? Math.max(expected, rows.length);

  return (
    <>
      <PageHeader
        title="Import mailboxes"
        subtitle="Connect many mailboxes from one CSV file. Each login is checked; passwords are never shown again."
        back={{ to: '/mailboxes', label: 'Mailboxes' }}
      />
      <Card title="Upload">
        <form class="form-page" onSubmit={start}>
          <p>
            The first line names the columns; only <code>email</code> and <code>password</code> are required. Use{' '}
            <code>provider</code> (gmail, outlook, yahoo, zoho, icloud, fastmail) or <code>imap_host</code> and{' '}
            <code>smtp_host</code> for your own server. All columns: <code>{COLUMNS}</code>.
          </p>
          <p>
            <Button variant="ghost" size="sm" onClick={downloadTemplate}>
              Download a sample file
            </Button>
          </p>
          <div class="field">
            <label for="import-file">CSV file</label>
            <input
              id="import-file"
              type="file"
              accept=".csv,text/csv"
              onChange={(event) => setFile((event.currentTarget as HTMLInputElement).files?.[0] ?? null)}
            />
          </div>
          <div>
            <Button type="submit" variant="primary" icon={<IconUpload size={18} />} loading={running} disabled={!file}>
              Import
            </Button>
          </div>
        </form>
      </Card>

      {failure !== undefined && <ErrorBox error={failure} title="The file was not imported" />}

      {(running || summary || rows.length > 0) && (
        <Card
          title="Results"
          subtitle={
            summary
              ? `${summary.created} created, ${summary.existing} already there, ${summary.failed} failed`
              : `${rows.length} of ${total} rows checked`
          }
        >
          <Progress value={summary ? summary.total : rows.length} max={Math.max(total, 1)} label="Rows checked" />
          {summary && summary.created > 0 && (
            <Notice tone="success">
              New mailboxes send themselves a test message on the engine's next cycle, then join the warmup pool.{' '}
              <Link to="/mailboxes">See your mailboxes</Link>
            </Notice>
          )}
          <div class="table-wrap">
            <table class="table" aria-label="Import results">
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Address</th>
                  <th scope="col">Result</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((row) => (
                  <tr key={row.line}>
                    <td class="num">{row.line}</td>
                    <td>
                      {row.mailboxId ? (
                        <Link to={`/mailboxes/${encodeURIComponent(row.mailboxId)}`}>{row.email}</Link>
                      ) : (
                        (row.email ?? '–')
                      )}
                    </td>
                    <td>
                      <Badge tone={RESULT_BADGE[row.result].tone}>{RESULT_BADGE[row.result].label}</Badge>
                    </td>
                    <td>{row.error ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </>
  );
}
