// What the providers themselves said about each of the workspace's domains over an export's days:
// its DMARC reports (messages, the aligned share, the sources sending unaligned), Gmail Postmaster
// Tools (the latest spam rate and compliance verdict) and Microsoft SNDS (days by colour, for the
// addresses the domain's reports name), and the health guard's hold. The exports carry it beside
// the mailboxes' own figures: a report that shows only what Warmup measured would leave out the
// verdicts that matter most.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { domainFigures, sourceFigures } from '../dmarc/dmarc.repository.js';
import { sndsDaysOfDomain } from '../feeds/feeds.repository.js';
import type { DayRange } from './period.js';
import type { ProviderDomainRow } from './stats.schemas.js';

/** Domains an export covers at most: a workspace rarely has more than a few. */
export const EXPORT_DOMAINS = 200;

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

export async function providerDomainRows(
  db: Kysely<Database>,
  workspaceId: string,
  range: DayRange,
  mailboxId?: string,
): Promise<ProviderDomainRow[]> {
  const { startDate: from, endDate: to } = range;
  let mailboxes = db.selectFrom('mailboxes').select('email').where('workspace_id', '=', workspaceId);
  if (mailboxId) mailboxes = mailboxes.where('id', '=', mailboxId);
  const [own, dmarc, gmail, holds] = await Promise.all([
    mailboxes.execute(),
    domainFigures(db, workspaceId, from, to),
    // each domain's latest Postmaster day of the range
    db
      .selectFrom('postmaster_days as p')
      .innerJoin(
        db
          .selectFrom('postmaster_days')
          .select(['domain', (eb) => eb.fn.max('day').as('day')])
          .where('workspace_id', '=', workspaceId)
          .where('day', '>=', from)
          .where('day', '<=', to)
          .groupBy('domain')
          .as('latest'),
        (join) => join.onRef('latest.domain', '=', 'p.domain').onRef('latest.day', '=', 'p.day'),
      )
      .select(['p.domain', 'p.day', 'p.spam_rate', 'p.compliance'])
      .where('p.workspace_id', '=', workspaceId)
      .orderBy('p.domain')
      .limit(EXPORT_DOMAINS)
      .execute(),
    db.selectFrom('provider_holds').select(['domain', 'reason']).where('workspace_id', '=', workspaceId).execute(),
  ]);
  const ownDomains = new Set(own.map((m) => domainOf(m.email)));
  // One mailbox's export is about its own domain; the workspace's about every domain any source names.
  const names = mailboxId
    ? [...ownDomains]
    : [
        ...new Set([
          ...ownDomains,
          ...dmarc.map((r) => r.domain),
          ...gmail.map((r) => r.domain),
          ...holds.map((r) => r.domain),
        ]),
      ];
  names.sort();
  const rows: ProviderDomainRow[] = [];
  for (const domain of names.slice(0, EXPORT_DOMAINS)) {
    const figures = dmarc.find((r) => r.domain === domain);
    const messages = Number(figures?.messages ?? 0);
    const [sources, snds] = figures
      ? await Promise.all([
          sourceFigures(db, workspaceId, domain, from, to),
          sndsDaysOfDomain(db, workspaceId, domain, from),
        ])
      : [[], []];
    const latestGmail = gmail.find((r) => r.domain === domain);
    const inRange = snds.filter((r) => r.day <= to);
    const colour = (filter: string) =>
      new Set(inRange.filter((r) => r.filter_result === filter).map((r) => r.day)).size;
    const hold = holds.find((r) => r.domain === domain);
    rows.push({
      domain,
      dmarcMessages: messages,
      dmarcAlignedShare: messages > 0 ? Number(figures!.dmarc_pass) / messages : null,
      unalignedSources: sources.filter((s) => Number(s.dmarc_pass) < Number(s.messages)).length,
      gmailSpamRate: latestGmail?.spam_rate == null ? null : Number(latestGmail.spam_rate),
      gmailDay: latestGmail?.day ?? null,
      gmailCompliance: latestGmail?.compliance ?? null,
      sndsRedDays: colour('red'),
      sndsYellowDays: colour('yellow'),
      sndsGreenDays: colour('green'),
      held: hold !== undefined,
      holdReason: hold?.reason ?? null,
    });
  }
  return rows;
}
