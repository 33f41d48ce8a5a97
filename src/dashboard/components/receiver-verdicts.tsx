// What the receiving providers thought of a mailbox's mail (GET /api/mailboxes/:id/verdicts): one
// line per provider ("Gmail: SPF pass, DKIM pass, DMARC pass, 96 % inbox") and what fails there,
// with the change that fixes it.
import type { MailboxVerdicts } from '../api.js';
import { api } from '../api.js';
import { periodLabel, type Period } from '../format.js';
import { useResource } from '../hooks.js';
import { Card, ErrorBox, Loading } from './ui.js';

function Lines({ verdicts, period }: { verdicts: MailboxVerdicts; period: Period }) {
  if (verdicts.total === 0) {
    return (
      <p class="muted">
        No email of this mailbox was found by a receiver in the last {periodLabel(period)}: nothing to show yet.
      </p>
    );
  }
  return (
    <>
      <ul class="verdict-lines" aria-label="Verdicts per receiving provider">
        {verdicts.byProvider.map((p) => (
          <li key={p.provider} data-testid="verdict-line">
            {p.summary}
            <span class="muted">
              {' '}
              ({p.total} {p.total === 1 ? 'email' : 'emails'}
              {p.averageSpamScore !== null ? `, spam score ${p.averageSpamScore}` : ''}
              {p.averageScl !== null ? `, SCL ${p.averageScl}` : ''}
              {p.averageBcl !== null ? `, BCL ${p.averageBcl}` : ''})
            </span>
          </li>
        ))}
      </ul>
      {verdicts.problems.length > 0 && (
        <ul class="outlook-attention" aria-label="Fails at receivers">
          {verdicts.problems.map((problem) => (
            <li key={problem.code} data-testid="verdict-problem">
              <strong>{problem.message}</strong> {problem.fix}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function ReceiverVerdicts({ mailboxId, period }: { mailboxId: string; period: Period }) {
  const verdicts = useResource(() => api.mailboxVerdicts(mailboxId, { period }), [mailboxId, period]);
  return (
    <Card
      title="What receivers saw"
      subtitle="SPF, DKIM and DMARC as each receiving provider evaluated this mailbox's mail, and where it filed it"
    >
      {verdicts.error ? (
        <ErrorBox error={verdicts.error} onRetry={verdicts.reload} title="Could not load the receivers' verdicts" />
      ) : verdicts.data ? (
        <Lines verdicts={verdicts.data} period={period} />
      ) : (
        <Loading label="Loading the receivers' verdicts" rows={2} />
      )}
    </Card>
  );
}
