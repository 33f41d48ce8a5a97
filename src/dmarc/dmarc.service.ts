import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { NotFoundError, ValidationError } from '../http/errors.js';
import {
  dayFigures,
  domainFigures,
  findSource,
  latestReason,
  saveSource,
  setAsideReasons,
  sourceFigures,
  type FigureRow,
} from './dmarc.repository.js';
import type { DmarcDomainDetail, DmarcDomains, DmarcSource, DmarcSourceBody } from './dmarc.schemas.js';

export interface DmarcServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
}

/** The figures cover the last 30 days, today included (days are the UTC days the reports begin). */
export const WINDOW_DAYS = 30;

function figures(row: FigureRow) {
  const messages = Number(row.messages);
  const quarantine = Number(row.quarantined);
  const reject = Number(row.rejected);
  return {
    messages,
    dmarcPass: Number(row.dmarc_pass),
    spfAlignedPass: Number(row.spf_pass),
    dkimAlignedPass: Number(row.dkim_pass),
    dispositions: { none: messages - quarantine - reject, quarantine, reject },
  };
}

const isoOrNull = (value: unknown) => (value ? new Date(String(value)).toISOString() : null);

/** Where a workspace's DMARC aggregate reports come from, and what they say per domain. */
export function createDmarcService({ db, clock }: DmarcServiceDeps) {
  function window() {
    const today = clock.now();
    const from = new Date(today.getTime() - (WINDOW_DAYS - 1) * 86_400_000);
    return {
      from: from.toISOString().slice(0, 10),
      to: today.toISOString().slice(0, 10),
      since: `${from.toISOString().slice(0, 10)}T00:00:00.000Z`,
    };
  }

  async function getSource(workspaceId: string): Promise<DmarcSource | null> {
    const row = await findSource(db, workspaceId);
    if (!row) return null;
    return { mailboxId: row.mailbox_id, folder: row.folder, checkedAt: row.checked_at, lastError: row.last_error };
  }

  return {
    getSource,

    /** Names the mailbox and folder the reports arrive in; the mailbox must be the workspace's own. */
    async setSource(workspaceId: string, body: DmarcSourceBody): Promise<DmarcSource> {
      const mailbox = await db
        .selectFrom('mailboxes')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', body.mailboxId)
        .executeTakeFirst();
      if (!mailbox) throw ValidationError.field('/body/mailboxId', 'no mailbox of this workspace has this id');
      await saveSource(db, workspaceId, body.mailboxId, body.folder.trim(), clock.now().toISOString());
      return (await getSource(workspaceId))!;
    },

    /** Stops reading the workspace's report folder; the reports kept stay. */
    async removeSource(workspaceId: string): Promise<void> {
      const removed = await db.deleteFrom('dmarc_sources').where('workspace_id', '=', workspaceId).executeTakeFirst();
      if (Number(removed.numDeletedRows) === 0) throw new NotFoundError('no DMARC report source is named');
    },

    async domains(workspaceId: string): Promise<DmarcDomains> {
      const { from, to, since } = window();
      const rows = await domainFigures(db, workspaceId, from, to);
      const reasons = await setAsideReasons(db, workspaceId, since);
      return {
        from,
        to,
        domains: rows.map((row) => {
          const f = figures(row);
          return {
            domain: row.domain,
            ...f,
            alignedShare: f.messages > 0 ? f.dmarcPass / f.messages : null,
            sources: Number(row.sources),
            reports: Number(row.reports),
            lastReportAt: isoOrNull(row.last_report_at),
          };
        }),
        setAside: {
          count: reasons.reduce((sum, r) => sum + Number(r.count), 0),
          reasons: await Promise.all(
            reasons.map(async (r) => ({
              code: r.code,
              count: Number(r.count),
              latest: await latestReason(db, workspaceId, r.code),
            })),
          ),
        },
      };
    },

    async domain(workspaceId: string, domain: string): Promise<DmarcDomainDetail> {
      const { from, to } = window();
      const name = domain.toLowerCase();
      const days = await dayFigures(db, workspaceId, name, from, to);
      const sources = await sourceFigures(db, workspaceId, name, from, to);
      return {
        domain: name,
        from,
        to,
        days: days.map((row) => ({ day: row.day, ...figures(row), reports: Number(row.reports) })),
        sources: sources.map((row) => ({
          ip: row.source_ip,
          // NO_NAME: asked, and none usable
          name: (row.source_name as string | null) || null,
          ...figures(row),
        })),
      };
    },
  };
}

export type DmarcService = ReturnType<typeof createDmarcService>;
