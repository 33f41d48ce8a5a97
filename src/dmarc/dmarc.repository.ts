import { sql, type Kysely, type Selectable } from 'kysely';
import { newId } from '../db/ids.js';
import { insertMany } from '../db/insert-many.js';
import type { Database } from '../db/schema.js';
import type { DmarcSourcesTable } from '../db/schema-dmarc.js';
import type { AggregateReport } from './report-parser.js';

// Every query a route reaches takes the workspace id: one workspace never sees another's reports.

export type DmarcSourceRow = Selectable<DmarcSourcesTable>;

export async function findSource(db: Kysely<Database>, workspaceId: string): Promise<DmarcSourceRow | undefined> {
  return db.selectFrom('dmarc_sources').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** Names the folder; another mailbox or folder starts reading from its first message again. */
export async function saveSource(
  db: Kysely<Database>,
  workspaceId: string,
  mailboxId: string,
  folder: string,
  now: string,
): Promise<void> {
  const existing = await findSource(db, workspaceId);
  if (!existing) {
    await db
      .insertInto('dmarc_sources')
      .values({
        workspace_id: workspaceId,
        mailbox_id: mailboxId,
        folder,
        uid_validity: null,
        last_uid: 0,
        checked_at: null,
        last_error: null,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('workspace_id').doNothing())
      .execute();
    return;
  }
  const same = existing.mailbox_id === mailboxId && existing.folder === folder;
  await db
    .updateTable('dmarc_sources')
    .set(
      same
        ? { updated_at: now }
        : { mailbox_id: mailboxId, folder, uid_validity: null, last_uid: 0, last_error: null, updated_at: now },
    )
    .where('workspace_id', '=', workspaceId)
    .execute();
}

/** Every workspace's source, for the job. */
export async function listSources(db: Kysely<Database>): Promise<DmarcSourceRow[]> {
  return db.selectFrom('dmarc_sources').selectAll().orderBy('workspace_id').execute();
}

export async function markSource(
  db: Kysely<Database>,
  source: DmarcSourceRow,
  change: Pick<DmarcSourceRow, 'uid_validity' | 'last_uid' | 'checked_at' | 'last_error'>,
): Promise<void> {
  await db
    .updateTable('dmarc_sources')
    .set(change)
    .where('workspace_id', '=', source.workspace_id)
    // a source renamed meanwhile keeps its own fresh mark
    .where('mailbox_id', '=', source.mailbox_id)
    .where('folder', '=', source.folder)
    .execute();
}

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** Keeps a report once: `duplicate` when this organisation's report of that id is already kept. */
export async function insertReport(
  db: Kysely<Database>,
  workspaceId: string,
  report: AggregateReport,
  now: string,
): Promise<'stored' | 'duplicate'> {
  return db.transaction().execute(async (trx) => {
    const id = newId('dmr');
    const inserted = await trx
      .insertInto('dmarc_reports')
      .values({
        id,
        workspace_id: workspaceId,
        org_name: report.orgName,
        report_id: report.reportId,
        domain: report.policy.domain,
        begin_at: new Date(report.begin * 1000).toISOString(),
        end_at: new Date(report.end * 1000).toISOString(),
        day: day(report.begin),
        policy_p: report.policy.p,
        policy_sp: report.policy.sp,
        policy_pct: report.policy.pct,
        policy_adkim: report.policy.adkim,
        policy_aspf: report.policy.aspf,
        records: report.records.length,
        messages: report.records.reduce((sum, r) => sum + r.count, 0),
        received_at: now,
      })
      .onConflict((oc) => oc.columns(['workspace_id', 'org_name', 'report_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return 'duplicate';
    await insertMany(
      trx,
      'dmarc_records',
      report.records.map((r, k) => ({
        report_id: id,
        row_no: k,
        source_ip: r.sourceIp,
        source_name: null,
        messages: r.count,
        disposition: r.disposition,
        dkim_aligned: r.dkimAligned,
        spf_aligned: r.spfAligned,
        dkim_result: r.dkimResult,
        spf_result: r.spfResult,
        header_from: r.headerFrom,
      })),
    );
    return 'stored';
  });
}

export async function insertSetAside(
  db: Kysely<Database>,
  row: { workspaceId: string; mailboxId: string; subject: string; code: string; reason: string; now: string },
): Promise<void> {
  await db
    .insertInto('dmarc_set_aside')
    .values({
      id: newId('dsa'),
      workspace_id: row.workspaceId,
      mailbox_id: row.mailboxId,
      subject: row.subject,
      code: row.code,
      reason: row.reason,
      found_at: row.now,
    })
    .execute();
}

/** The figures of a set of report rows, in both dialects (sums come back as text from PostgreSQL). */
const figureColumns = [
  sql<number>`cast(coalesce(sum(rec.messages), 0) as integer)`.as('messages'),
  sql<number>`cast(coalesce(sum(case when rec.dkim_aligned = 'pass' or rec.spf_aligned = 'pass' then rec.messages else 0 end), 0) as integer)`.as(
    'dmarc_pass',
  ),
  sql<number>`cast(coalesce(sum(case when rec.spf_aligned = 'pass' then rec.messages else 0 end), 0) as integer)`.as(
    'spf_pass',
  ),
  sql<number>`cast(coalesce(sum(case when rec.dkim_aligned = 'pass' then rec.messages else 0 end), 0) as integer)`.as(
    'dkim_pass',
  ),
  sql<number>`cast(coalesce(sum(case when rec.disposition = 'quarantine' then rec.messages else 0 end), 0) as integer)`.as(
    'quarantined',
  ),
  sql<number>`cast(coalesce(sum(case when rec.disposition = 'reject' then rec.messages else 0 end), 0) as integer)`.as(
    'rejected',
  ),
] as const;

export interface FigureRow {
  messages: number;
  dmarc_pass: number;
  spf_pass: number;
  dkim_pass: number;
  quarantined: number;
  rejected: number;
}

function window(db: Kysely<Database>, workspaceId: string, from: string, to: string) {
  return db
    .selectFrom('dmarc_reports as rep')
    .leftJoin('dmarc_records as rec', 'rec.report_id', 'rep.id')
    .where('rep.workspace_id', '=', workspaceId)
    .where('rep.day', '>=', from)
    .where('rep.day', '<=', to);
}

export async function domainFigures(db: Kysely<Database>, workspaceId: string, from: string, to: string) {
  return window(db, workspaceId, from, to)
    .select(['rep.domain', ...figureColumns])
    .select((eb) => [
      eb.fn.count<number>('rec.source_ip').distinct().as('sources'),
      eb.fn.count<number>('rep.id').distinct().as('reports'),
      eb.fn.max('rep.received_at').as('last_report_at'),
    ])
    .groupBy('rep.domain')
    .orderBy('rep.domain')
    .limit(1_000)
    .execute();
}

export async function dayFigures(db: Kysely<Database>, workspaceId: string, domain: string, from: string, to: string) {
  return window(db, workspaceId, from, to)
    .where('rep.domain', '=', domain)
    .select(['rep.day', ...figureColumns])
    .select((eb) => eb.fn.count<number>('rep.id').distinct().as('reports'))
    .groupBy('rep.day')
    .orderBy('rep.day')
    .execute();
}

export async function sourceFigures(
  db: Kysely<Database>,
  workspaceId: string,
  domain: string,
  from: string,
  to: string,
) {
  return db
    .selectFrom('dmarc_reports as rep')
    .innerJoin('dmarc_records as rec', 'rec.report_id', 'rep.id')
    .where('rep.workspace_id', '=', workspaceId)
    .where('rep.day', '>=', from)
    .where('rep.day', '<=', to)
    .where('rep.domain', '=', domain)
    .select(['rec.source_ip', ...figureColumns])
    .select((eb) => eb.fn.max('rec.source_name').as('source_name'))
    .groupBy('rec.source_ip')
    .orderBy('messages', 'desc')
    .orderBy('rec.source_ip')
    .limit(200)
    .execute();
}

export async function setAsideReasons(db: Kysely<Database>, workspaceId: string, since: string) {
  return db
    .selectFrom('dmarc_set_aside')
    .where('workspace_id', '=', workspaceId)
    .where('found_at', '>=', since)
    .select((eb) => ['code', eb.fn.countAll<number>().as('count'), eb.fn.max('found_at').as('latest_at')])
    .groupBy('code')
    .orderBy('code')
    .execute();
}

export async function latestReason(db: Kysely<Database>, workspaceId: string, code: string): Promise<string> {
  const row = await db
    .selectFrom('dmarc_set_aside')
    .select('reason')
    .where('workspace_id', '=', workspaceId)
    .where('code', '=', code)
    .orderBy('found_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row?.reason ?? '';
}
