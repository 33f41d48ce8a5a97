// The API shape of a placement test, from its rows: what the report route, the weekly report and
// the engine's `placement_test.completed` event show. Below the engine, which builds the event.
import type { PlacementTestRecord } from './placement-tests.repository.js';
import type { PlacementCounts, PlacementTest, ProviderCopyVerdicts } from './placement-tests.schemas.js';

function emptyCounts(): PlacementCounts {
  return { inbox: 0, promotions: 0, spam: 0, other: 0, missing: 0, pending: 0 };
}

function count(counts: PlacementCounts, placement: string | null): void {
  const key = (placement ?? 'pending') as keyof PlacementCounts;
  counts[key in counts ? key : 'other'] += 1;
}

type CopyRow = PlacementTestRecord['copies'][number];

function isFound(copy: CopyRow): boolean {
  return copy.found_at !== null && copy.placement !== null && copy.placement !== 'missing';
}

/** Percent of the copies with a result that passed, one decimal; null when no receiver gave one. */
function passShare(results: Array<string | null>): number | null {
  const given = results.filter((result) => result !== null);
  if (given.length === 0) return null;
  return Math.round((given.filter((result) => result === 'pass').length / given.length) * 1000) / 10;
}

function mean(values: Array<number | null>): number | null {
  const given = values.filter((value): value is number => value !== null);
  return given.length === 0 ? null : Math.round((given.reduce((a, b) => a + b, 0) / given.length) * 10) / 10;
}

/** The receivers' verdicts on the copies found of one provider's seeds. */
export function providerCopyVerdicts(copies: readonly CopyRow[]): ProviderCopyVerdicts {
  const found = copies.filter(isFound);
  return {
    found: found.length,
    spfPass: passShare(found.map((copy) => copy.spf)),
    dkimPass: passShare(found.map((copy) => copy.dkim)),
    dmarcPass: passShare(found.map((copy) => copy.dmarc)),
    averageSpamScore: mean(found.map((copy) => copy.spam_score)),
    averageScl: mean(found.map((copy) => copy.scl)),
  };
}

/** The API shape of a test: totals, per receiving provider, per seed. */
export function placementTestView({ test, senderEmail, copies }: PlacementTestRecord): PlacementTest {
  const totals = emptyCounts();
  const providers = new Map<string, { counts: PlacementCounts; copies: CopyRow[] }>();
  for (const copy of copies) {
    count(totals, copy.placement);
    const provider = providers.get(copy.provider) ?? { counts: emptyCounts(), copies: [] };
    count(provider.counts, copy.placement);
    provider.copies.push(copy);
    providers.set(copy.provider, provider);
  }
  return {
    id: test.id,
    sender: { id: test.sender_mailbox_id, email: senderEmail },
    subject: test.subject,
    status: test.status,
    lastError: test.last_error,
    createdAt: test.created_at,
    sentAt: test.sent_at,
    completedAt: test.completed_at,
    totals,
    providers: [...providers].map(([provider, { counts, copies: own }]) => ({
      provider,
      ...counts,
      verdicts: providerCopyVerdicts(own),
    })),
    seeds: copies.map((copy) => ({
      mailbox: { id: copy.seed_mailbox_id, email: copy.seed_email },
      provider: copy.provider,
      placement: copy.placement,
      sentAt: copy.sent_at,
      foundAt: copy.found_at,
      verdict: isFound(copy)
        ? {
            authservId: copy.authserv_id,
            spf: copy.spf,
            dkim: copy.dkim,
            dmarc: copy.dmarc,
            arc: copy.arc,
            scl: copy.scl,
            bcl: copy.bcl,
            spamScore: copy.spam_score,
          }
        : null,
    })),
  };
}
