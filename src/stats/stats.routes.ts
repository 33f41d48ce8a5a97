import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import { domainsCsv, exportCsv } from './export-csv.js';
import { renderReportPdf } from './export-pdf.js';
import type { DayRange } from './period.js';
import {
  AnalyticsEnvelope,
  DailySummaryEnvelope,
  DailySummaryQuery,
  DashboardQuery,
  DashboardStats,
  EngagementEnvelope,
  EXPORT_COLUMNS,
  ExportDocument,
  ExportQuery,
  type ExportRow,
  MailboxStatsEnvelope,
  PERIOD_DESCRIPTION,
  PeriodQuery,
  PlacementEnvelope,
  type ProviderDomainRow,
  ReputationEnvelope,
  StatsQuery,
} from './stats.schemas.js';
import type { StatsService } from './stats.service.js';

const tags = ['stats'];

const SENDER_RULE =
  'Counted for the sender: `sent`/`received` are what the mailboxes sent and received; placement, rescued, opened, flagged, replied, promotedToPrimary and bounced are about the mail they sent. Read from daily rollups.';

/** A body sent as a stream: the schema documents it, the type lets the route hand Fastify the stream. */
const Streamed = (schema: Record<string, unknown>) => Type.Unsafe<NodeJS.ReadableStream>(schema);

function attachment(range: DayRange, extension: string, table?: 'domains'): string {
  const name = table ? `warmup-${table}` : 'warmup-stats';
  return `attachment; filename="${name}-${range.startDate}-${range.endDate}.${extension}"`;
}

/** `{export: {startDate, endDate, rows}}` written as it is read, so a large export never sits in memory whole. */
async function* exportJson(
  range: DayRange,
  rows: AsyncIterable<ExportRow[]>,
  domains: () => Promise<ProviderDomainRow[]>,
): AsyncGenerator<string> {
  yield `{"export":{"startDate":${JSON.stringify(range.startDate)},"endDate":${JSON.stringify(range.endDate)},"rows":[`;
  let first = true;
  for await (const batch of rows) {
    if (batch.length === 0) continue;
    // Only the export columns: the rows may carry more.
    const parts = batch.map((row) =>
      JSON.stringify(Object.fromEntries(EXPORT_COLUMNS.map((column) => [column, row[column]]))),
    );
    yield `${first ? '' : ','}${parts.join(',')}`;
    first = false;
  }
  yield `],"domains":${JSON.stringify(await domains())}}}`;
}

export function statsRoutes(stats: StatsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/dashboard',
      {
        schema: {
          tags,
          operationId: 'getDashboardStats',
          summary: 'Dashboard figures for today',
          description:
            'Mailbox counts, the whole-number mean reputation of the active mailboxes (0 when none), and what the workspace sent and received today (UTC). ' +
            'With a period (`period`, or `startDate` and `endDate`), also `headline`: sent, inbox rate, spam rate and reputation of that period against the same number of days just before it.',
          querystring: DashboardQuery,
          response: { 200: DashboardStats, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => ({ stats: await stats.dashboard(request.workspaceId, request.query) }),
    );

    app.get(
      '/analytics',
      {
        schema: {
          tags,
          operationId: 'getAnalytics',
          summary: 'Totals, rates and daily figures over a period',
          description: `${PERIOD_DESCRIPTION} ${SENDER_RULE} \`totals\` is exactly the sum of \`daily\` (which shows a subset of its columns).`,
          querystring: StatsQuery,
          response: { 200: AnalyticsEnvelope, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ({ analytics: await stats.analytics(request.workspaceId, request.query) }),
    );

    app.get(
      '/reputation',
      {
        schema: {
          tags,
          operationId: 'getReputationHistory',
          summary: 'Reputation history over a period',
          description: `${PERIOD_DESCRIPTION} Without mailboxId the score of a day is the mean over the mailboxes that have one.`,
          querystring: StatsQuery,
          response: { 200: ReputationEnvelope, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ({ reputation: await stats.reputation(request.workspaceId, request.query) }),
    );

    app.get(
      '/placement',
      {
        schema: {
          tags,
          operationId: 'getPlacementStats',
          summary: 'Where the mail was found: inbox, spam, promotions, other',
          description: `${PERIOD_DESCRIPTION} Totals and byMailbox are counted for the sender; byProvider by the receiving mailbox's provider.`,
          querystring: StatsQuery,
          response: { 200: PlacementEnvelope, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ({ placement: await stats.placement(request.workspaceId, request.query) }),
    );

    app.get(
      '/engagement',
      {
        schema: {
          tags,
          operationId: 'getEngagementStats',
          summary: 'What the peers did with the mail: opened, flagged, replied, rescued, moved to Primary',
          description: `${PERIOD_DESCRIPTION} openRate and replyRate are over the messages the peers received (found in any folder), rescueRate over those found in spam, promotedToPrimaryRate over those found in a promotions tab or folder.`,
          querystring: StatsQuery,
          response: { 200: EngagementEnvelope, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ({ engagement: await stats.engagement(request.workspaceId, request.query) }),
    );

    app.get(
      '/export',
      {
        schema: {
          tags,
          operationId: 'exportStats',
          summary: 'Export the statistics as CSV, JSON or a PDF report',
          description:
            `${PERIOD_DESCRIPTION} csv and json: one row per mailbox per day of the range (empty days included), by date then email; ` +
            `CSV has the header \`${EXPORT_COLUMNS.join(',')}\`, RFC 4180 quoting, CRLF line ends, an empty reputation when there is none. ` +
            'json also carries `domains`: what the providers said of each domain (DMARC reports, Gmail Postmaster Tools, Microsoft SNDS, a hold); ' +
            '`table=domains` exports that as the CSV instead. ' +
            "pdf: a report with totals and rates, a reputation chart, an inbox-vs-spam chart, the per-mailbox table and the providers' verdicts. " +
            'Sent as an attachment named `warmup-stats-<startDate>-<endDate>.<format>`; csv and json are streamed.',
          querystring: ExportQuery,
          response: {
            200: {
              description: 'The export',
              content: {
                'text/csv': { schema: Streamed({ type: 'string' }) },
                'application/json': { schema: Streamed(ExportDocument) },
                'application/pdf': { schema: Streamed({ type: 'string', format: 'binary' }) },
              },
            },
            ...errorResponses(400, 401, 404, 429),
          },
        },
      },
      async (request, reply) => {
        const { format, table, ...query } = request.query;
        if (format === 'pdf') {
          const report = await stats.report(request.workspaceId, query);
          return reply
            .header('Content-Disposition', attachment(report.range, 'pdf'))
            .type('application/pdf')
            .send(await renderReportPdf(report));
        }
        const { range, rows, domains } = await stats.exportRows(request.workspaceId, query);
        if (format === 'csv' && table === 'domains') {
          return reply
            .header('Content-Disposition', attachment(range, 'csv', 'domains'))
            .type('text/csv; charset=utf-8')
            .send(Readable.from([domainsCsv(await domains())]));
        }
        reply.header('Content-Disposition', attachment(range, format));
        if (format === 'csv') return reply.type('text/csv; charset=utf-8').send(Readable.from(exportCsv(rows)));
        return reply.type('application/json; charset=utf-8').send(Readable.from(exportJson(range, rows, domains)));
      },
    );

    app.get(
      '/daily-summary',
      {
        schema: {
          tags,
          operationId: 'getDailySummary',
          summary: "One day's figures, per mailbox too",
          description:
            'Counters of the day (UTC, default today) summed over the workspace, the number of mailboxes in each status now, the change of the ' +
            "workspace's reputation from the day before, and every mailbox's figures of that day.",
          querystring: DailySummaryQuery,
          response: { 200: DailySummaryEnvelope, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => ({ summary: await stats.dailySummary(request.workspaceId, request.query) }),
    );
  };
}

/** `GET /api/mailboxes/:id/stats`, registered under `/mailboxes` beside the mailbox routes. */
export function mailboxStatsRoutes(stats: StatsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/:id/stats',
      {
        schema: {
          tags: ['mailboxes'],
          operationId: 'getMailboxStats',
          summary: "A mailbox's statistics over a period",
          description: `${PERIOD_DESCRIPTION} ${SENDER_RULE} \`reputation\` is the current score; \`todaySent\`/\`todayReceived\` count today (UTC).`,
          params: IdParams,
          querystring: PeriodQuery,
          response: { 200: MailboxStatsEnvelope, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ({ stats: await stats.mailboxStats(request.workspaceId, request.params.id, request.query) }),
    );
  };
}
