import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { NotFoundError } from '../http/errors.js';
import { addDays, daysBetween, eachDay, utcDay } from '../calendar.js';
import { WARMUP_STATES, type MailboxStatus, type WarmupState } from '../mailboxes/mailboxes.schemas.js';
import { WARMING_STATES } from '../mailboxes/mailbox-outlook.js';
import { describePool, presentMailboxes } from '../mailboxes/mailbox-view.js';
import { parseDay, resolvePeriod, type DayRange, type PeriodInput } from './period.js';
import { verdictSummary, type VerdictSummary } from '../verdicts/verdicts.service.js';
import { workspaceBlocklists, type WorkspaceBlocklists } from '../checks/checks.repository.js';
import { placementTestsBetween } from '../placement-tests/placement-tests.repository.js';
import type { PlacementTest } from '../placement-tests/placement-tests.schemas.js';
import { placementTestView } from '../placement-tests/placement-test-view.js';
import { providerDomainRows } from './provider-domains.js';
import {
  byMailboxEmail,
  createStatsRepository,
  type DayTotals,
  type MailboxCheckRow,
  type MailboxDay,
  type MailboxTotals,
} from './stats.repository.js';
import {
  TOTAL_COLUMNS,
  type Analytics,
  type DailyRow,
  type DailySummary,
  type DailySummaryQuery,
  type DashboardQuery,
  type DashboardStats,
  type DayCounts,
  type Engagement,
  type Headline,
  type HeadlinePeriod,
  type ExportRow,
  type MailboxStats,
  type Placement,
  type ProviderDomainRow,
  type Rates,
  type Reputation,
  type StatsQuery,
  type Totals,
} from './stats.schemas.js';

export interface StatsServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /**
   * How long a computed answer may be served again (milliseconds, 0 = never). Identical requests
   * that arrive while one is being computed share it either way, within this window; a dashboard
   * that polls can then cost one query per window instead of one per request.
   */
  cacheMs?: number;
}

/** Everything a PDF report shows. */
export interface StatsReport {
  workspaceName: string;
  generatedAt: string;
  range: DayRange;
  mailboxId: string | null;
  totals: Totals;
  rates: Rates;
  daily: DailyRow[];
  /** Each with its state now, as the API shows it. */
  mailboxes: Array<MailboxTotals & { rates: Rates; state: WarmupState }>;
  /** The latest DNS checks of each mailbox (checks/), as the daily run stored them. */
  checks: MailboxCheckRow[];
  /** Where each receiving provider's mailboxes found the warmup mail they received. */
  byProvider: Placement['byProvider'];
  /** What the receivers thought of the mail (SPF/DKIM/DMARC per receiving provider). */
  verdicts: VerdictSummary;
  /** The placement tests made in the period (of the one mailbox as sender, when narrowed), oldest first. */
  placementTests: PlacementTest[];
  /** At most this many tests are in a report; more than that is said, not listed. */
  placementTestsCapped: boolean;
  /** What the blocklists say now of the mailboxes' domains and sending addresses. */
  blocklists: WorkspaceBlocklists;
  /** What the providers said of each domain over the range (DMARC reports, Postmaster Tools, SNDS) and its hold. */
  domains: ProviderDomainRow[];
}

/** Placement tests listed in one report at most. */
export const REPORT_PLACEMENT_TESTS = 50;

/** By the receiving mailbox's provider: where that provider's mailboxes found the mail they received. */
function placementByProvider(
  mailboxes: Array<Pick<MailboxTotals, 'provider' | 'receivedPlacement'>>,
): Placement['byProvider'] {
  const providers = new Map<
    string,
    { provider: string; inbox: number; spam: number; promotions: number; other: number }
  >();
  for (const mailbox of mailboxes) {
    const sum = providers.get(mailbox.provider) ?? {
      provider: mailbox.provider,
      inbox: 0,
      spam: 0,
      promotions: 0,
      other: 0,
    };
    sum.inbox += mailbox.receivedPlacement.inbox;
    sum.spam += mailbox.receivedPlacement.spam;
    sum.promotions += mailbox.receivedPlacement.promotions;
    sum.other += mailbox.receivedPlacement.other;
    providers.set(mailbox.provider, sum);
  }
  return [...providers.values()]
    .map((p) => ({ ...p, total: found(p), inboxRate: percent(p.inbox, found(p)) }))
    .filter((p) => p.total > 0)
    .sort((a, b) => b.total - a.total || a.provider.localeCompare(b.provider));
}

/** One mailbox on one day: an export row, plus the mailbox's status. */
export type MailboxDayRow = ExportRow & { status: MailboxStatus };

/** A day's counts as shown, zeros for a day without a rollup row. */
function dayCountsOf(row: DayCounts | undefined): DayCounts {
  return {
    sent: row?.sent ?? 0,
    received: row?.received ?? 0,
    inbox: row?.inbox ?? 0,
    spam: row?.spam ?? 0,
    rescued: row?.rescued ?? 0,
    opened: row?.opened ?? 0,
    replied: row?.replied ?? 0,
    promotedToPrimary: row?.promotedToPrimary ?? 0,
  };
}

// One query for the CSV/JSON export fetches about this many rollup rows, so memory stays bounded
// however many mailboxes and days are exported.
const EXPORT_CHUNK_ROWS = 20_000;
const CACHE_MAX_ENTRIES = 500;

/** A percentage with one decimal; 0 when there is nothing to divide by. */
export function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10;
}

export function found(totals: Pick<Totals, 'inbox' | 'spam' | 'promotions' | 'other'>): number {
  return totals.inbox + totals.spam + totals.promotions + totals.other;
}

export function ratesOf(totals: Totals): Rates {
  const reached = found(totals);
  return {
    inboxRate: percent(totals.inbox, reached),
    spamRate: percent(totals.spam, reached),
    openRate: percent(totals.opened, reached),
    replyRate: percent(totals.replied, reached),
    bounceRate: percent(totals.bounced, totals.sent),
  };
}

function zeroTotals(): Totals {
  const totals = {} as Totals;
  for (const column of TOTAL_COLUMNS) totals[column] = 0;
  return totals;
}

function sumTotals(rows: Iterable<Totals>): Totals {
  const sum = zeroTotals();
  for (const row of rows) for (const column of TOTAL_COLUMNS) sum[column] += row[column];
  return sum;
}

/**
 * Remembers answers for `ttlMs`. The entry holds the promise, so concurrent identical requests
 * share one computation; a failure is forgotten at once.
 */
function createResultCache(ttlMs: number) {
  const entries = new Map<string, { expires: number; value: Promise<unknown> }>();
  return function cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (ttlMs <= 0) return load();
    // A monotonic timer, not the injected clock: this is cache freshness, not business time.
    const now = performance.now();
    const hit = entries.get(key);
    if (hit && hit.expires > now) return hit.value as Promise<T>;
    const value = load();
    const entry = { expires: now + ttlMs, value };
    entries.delete(key);
    entries.set(key, entry);
    if (entries.size > CACHE_MAX_ENTRIES) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) entries.delete(oldest);
    }
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  };
}

/** The score a mailbox has before its first one (mailboxes.reputation starts there; reputation.ts blends towards it). */
const STARTING_REPUTATION = 50;

export function createStatsService({ db, clock, cacheMs = 0 }: StatsServiceDeps) {
  const repository = createStatsRepository(db);
  const cached = createResultCache(cacheMs);

  const today = () => utcDay(clock.now());

  async function requireMailbox(workspaceId: string, mailboxId: string) {
    const mailbox = await repository.findMailbox(workspaceId, mailboxId);
    if (!mailbox) throw new NotFoundError(`mailbox ${mailboxId} not found`);
    return mailbox;
  }

  /** The range a request asks for; `check` makes sure its mailbox (if any) is one of the workspace's. */
  function selection(workspaceId: string, query: PeriodInput & { mailboxId?: string }) {
    const range = resolvePeriod(query, today());
    const { mailboxId } = query;
    return {
      range,
      mailboxId,
      check: async () => {
        if (mailboxId !== undefined) await requireMailbox(workspaceId, mailboxId);
      },
    };
  }

  function cacheKey(kind: string, workspaceId: string, ...parts: Array<string | undefined>): string {
    return [kind, workspaceId, today(), ...parts.map((part) => part ?? '')].join('|');
  }

  /**
   * One row per day of the range with the counters summed over the selection. The reputation of a
   * day is the rounded mean of the scores recorded that day; a day without one carries the last
   * known score forward (from before the range too); days after today have none.
   */
  async function dailySeries(
    workspaceId: string,
    range: DayRange,
    mailboxId?: string,
  ): Promise<{ daily: DailyRow[]; totals: Totals }> {
    const { rows, carried: before } = await repository.dailyTotals(workspaceId, range, mailboxId);
    const byDay = new Map<string, DayTotals>(rows.map((row) => [row.day, row]));
    const now = today();
    let score = before === null ? null : Math.round(before);
    const daily = eachDay(range).map((date): DailyRow => {
      const row = byDay.get(date);
      if (row?.reputation !== null && row?.reputation !== undefined) score = Math.round(row.reputation);
      return {
        date,
        ...dayCountsOf(row),
        reputation: date > now ? null : score,
      };
    });
    // Totals come from the same rows as `daily`, so they always equal its sums.
    return { daily, totals: sumTotals(rows) };
  }

  /**
   * Every selected mailbox on every day of the range, by date then email, in chunks of whole days.
   * A mailbox's reputation carries its own last score forward.
   */
  /** Each mailbox's state now, as the mailboxes API shows it (one definition for the exports too). */
  async function statesOf(workspaceId: string, mailboxId?: string): Promise<Map<string, WarmupState>> {
    let query = db.selectFrom('mailboxes').selectAll().where('workspace_id', '=', workspaceId);
    if (mailboxId !== undefined) query = query.where('id', '=', mailboxId);
    const presented = await presentMailboxes(db, workspaceId, await query.execute(), clock.now());
    return new Map(presented.map((mailbox) => [mailbox.id, mailbox.outlook.state]));
  }

  async function* mailboxDayRows(
    workspaceId: string,
    range: DayRange,
    mailboxId?: string,
  ): AsyncGenerator<MailboxDayRow[]> {
    // The engine scores every active mailbox daily, so the day before the range answers for nearly
    // all of them in one query; only the others are looked up one by one.
    const dayBefore = addDays(range.startDate, -1);
    const [mailboxes, lastScores, states] = await Promise.all([
      repository.listMailboxes(workspaceId, mailboxId),
      repository.scoresOn(workspaceId, dayBefore, mailboxId),
      statesOf(workspaceId, mailboxId),
    ]);
    if (mailboxes.length === 0) return;
    const unscored = mailboxes.filter((m) => !lastScores.has(m.id)).map((m) => m.id);
    if (unscored.length > 0)
      for (const [id, score] of await repository.lastScoresBefore(workspaceId, dayBefore, unscored))
        lastScores.set(id, score);
    const days = eachDay(range);
    const now = today();
    const daysPerChunk = Math.max(1, Math.floor(EXPORT_CHUNK_ROWS / mailboxes.length));
    for (let first = 0; first < days.length; first += daysPerChunk) {
      const chunkDays = days.slice(first, first + daysPerChunk);
      const rows = await repository.mailboxDays(
        workspaceId,
        { startDate: chunkDays[0]!, endDate: chunkDays[chunkDays.length - 1]! },
        mailboxId,
      );
      const byKey = new Map<string, MailboxDay>(rows.map((row) => [`${row.day} ${row.mailboxId}`, row]));
      for (const date of chunkDays) {
        yield mailboxes.map((mailbox): MailboxDayRow => {
          const row = byKey.get(`${date} ${mailbox.id}`);
          if (row?.reputation !== null && row?.reputation !== undefined) lastScores.set(mailbox.id, row.reputation);
          return {
            date,
            mailboxId: mailbox.id,
            email: mailbox.email,
            status: mailbox.status,
            ...dayCountsOf(row),
            reputation: date > now ? null : (lastScores.get(mailbox.id) ?? null),
            state: states.get(mailbox.id)!.kind,
          };
        });
      }
    }
  }

  /** The headline figures of one period, from the same daily series the charts draw. */
  async function headlinePeriod(workspaceId: string, range: DayRange): Promise<HeadlinePeriod> {
    const { daily, totals } = await dailySeries(workspaceId, range);
    const reached = found(totals);
    return {
      ...range,
      sent: totals.sent,
      inboxRate: reached === 0 ? null : percent(totals.inbox, reached),
      spamRate: reached === 0 ? null : percent(totals.spam, reached),
      reputation: daily[daily.length - 1]?.reputation ?? null,
    };
  }

  /** The period against the same number of days just before it. */
  async function headlineOf(workspaceId: string, range: DayRange): Promise<Headline> {
    const days = daysBetween(range.startDate, range.endDate) + 1;
    const before = { startDate: addDays(range.startDate, -days), endDate: addDays(range.startDate, -1) };
    const [current, previous] = await Promise.all([
      headlinePeriod(workspaceId, range),
      headlinePeriod(workspaceId, before),
    ]);
    const points = (now: number | null, then: number | null) =>
      now === null || then === null ? null : Math.round((now - then) * 10) / 10;
    return {
      current,
      previous,
      change: {
        sent: previous.sent === 0 ? null : Math.round(((current.sent - previous.sent) / previous.sent) * 1000) / 10,
        inboxRate: points(current.inboxRate, previous.inboxRate),
        spamRate: points(current.spamRate, previous.spamRate),
        reputation: points(current.reputation, previous.reputation),
      },
    };
  }

  return {
    async dashboard(workspaceId: string, query: DashboardQuery = {}): Promise<DashboardStats> {
      const asked = query.period !== undefined || query.startDate !== undefined || query.endDate !== undefined;
      const range = asked ? resolvePeriod(query, today()) : undefined;
      return cached(cacheKey('dashboard', workspaceId, range?.startDate, range?.endDate), async () => {
        const day = today();
        const [counts, rows, headline] = await Promise.all([
          repository.mailboxCounts(workspaceId, day),
          db.selectFrom('mailboxes').selectAll().where('workspace_id', '=', workspaceId).execute(),
          range ? headlineOf(workspaceId, range) : undefined,
        ]);
        // each mailbox's state as the mailboxes API defines it: the overview counts what the lists show
        const mailboxes = await presentMailboxes(db, workspaceId, rows, clock.now());
        const states = Object.fromEntries(WARMUP_STATES.map((kind) => [kind, 0])) as DashboardStats['states'];
        for (const mailbox of mailboxes) states[mailbox.outlook.state.kind] += 1;
        return {
          totalMailboxes: counts.total,
          activeMailboxes: counts.active,
          warmingMailboxes: mailboxes.filter((m) => WARMING_STATES.has(m.outlook.state.kind)).length,
          states,
          pool: describePool(rows),
          avgReputation: counts.activeReputation === null ? 0 : Math.round(counts.activeReputation),
          todaySent: counts.sent,
          todayReceived: counts.received,
          ...(headline ? { headline } : {}),
        };
      });
    },

    async analytics(workspaceId: string, query: StatsQuery): Promise<Analytics> {
      const { range, mailboxId, check } = selection(workspaceId, query);
      return cached(cacheKey('analytics', workspaceId, range.startDate, range.endDate, mailboxId), async () => {
        await check();
        const { daily, totals } = await dailySeries(workspaceId, range, mailboxId);
        return { ...range, mailboxId: mailboxId ?? null, totals, rates: ratesOf(totals), daily };
      });
    },

    async reputation(workspaceId: string, query: StatsQuery): Promise<Reputation> {
      const { range, mailboxId, check } = selection(workspaceId, query);
      return cached(cacheKey('reputation', workspaceId, range.startDate, range.endDate, mailboxId), async () => {
        await check();
        const { daily } = await dailySeries(workspaceId, range, mailboxId);
        const history = daily.map((row) => ({ date: row.date, score: row.reputation }));
        const current = history[history.length - 1]?.score ?? null;
        const first = history.find((point) => point.score !== null)?.score ?? null;
        return {
          ...range,
          mailboxId: mailboxId ?? null,
          current,
          change: current === null || first === null ? null : current - first,
          history,
        };
      });
    },

    async placement(workspaceId: string, query: StatsQuery): Promise<Placement> {
      const { range, mailboxId, check } = selection(workspaceId, query);
      return cached(cacheKey('placement', workspaceId, range.startDate, range.endDate, mailboxId), async () => {
        await check();
        const mailboxes = await repository.placementTotals(workspaceId, range, mailboxId);
        const totals = { inbox: 0, spam: 0, promotions: 0, other: 0 };
        for (const mailbox of mailboxes)
          for (const column of ['inbox', 'spam', 'promotions', 'other'] as const) totals[column] += mailbox[column];
        const total = found(totals);
        return {
          ...range,
          total,
          inbox: totals.inbox,
          spam: totals.spam,
          promotions: totals.promotions,
          other: totals.other,
          inboxRate: percent(totals.inbox, total),
          spamRate: percent(totals.spam, total),
          byProvider: placementByProvider(mailboxes),
          byMailbox: mailboxes.map((m) => ({
            mailboxId: m.mailboxId,
            email: m.email,
            total: found(m),
            inbox: m.inbox,
            spam: m.spam,
            inboxRate: percent(m.inbox, found(m)),
          })),
        };
      });
    },

    async engagement(workspaceId: string, query: StatsQuery): Promise<Engagement> {
      const { range, mailboxId, check } = selection(workspaceId, query);
      return cached(cacheKey('engagement', workspaceId, range.startDate, range.endDate, mailboxId), async () => {
        await check();
        const totals = await repository.rangeTotals(workspaceId, range, mailboxId);
        const received = found(totals);
        return {
          ...range,
          received,
          opened: totals.opened,
          flagged: totals.flagged,
          replied: totals.replied,
          rescued: totals.rescued,
          openRate: percent(totals.opened, received),
          replyRate: percent(totals.replied, received),
          rescueRate: percent(totals.rescued, totals.spam),
          promotedToPrimary: totals.promotedToPrimary,
          promotedToPrimaryRate: percent(totals.promotedToPrimary, totals.promotions),
        };
      });
    },

    /** Checks the request, then hands back the rows to stream (never cached: exports are read once). */
    async exportRows(
      workspaceId: string,
      query: StatsQuery,
    ): Promise<{
      range: DayRange;
      rows: AsyncIterable<MailboxDayRow[]>;
      domains: () => Promise<ProviderDomainRow[]>;
    }> {
      const { range, mailboxId, check } = selection(workspaceId, query);
      await check();
      return {
        range,
        rows: mailboxDayRows(workspaceId, range, mailboxId),
        domains: () => providerDomainRows(db, workspaceId, range, mailboxId),
      };
    },

    async report(workspaceId: string, query: StatsQuery): Promise<StatsReport> {
      const { range, mailboxId, check } = selection(workspaceId, query);
      await check();
      const [name, series, mailboxes, checks, verdicts, tests, blocklists, states, domains] = await Promise.all([
        repository.workspaceName(workspaceId),
        dailySeries(workspaceId, range, mailboxId),
        repository.mailboxTotals(workspaceId, range, mailboxId),
        repository.latestChecks(workspaceId, mailboxId),
        verdictSummary(db, workspaceId, range, mailboxId),
        placementTestsBetween(db, workspaceId, {
          since: `${range.startDate}T00:00:00.000Z`,
          until: `${addDays(range.endDate, 1)}T00:00:00.000Z`,
          ...(mailboxId ? { senderMailboxId: mailboxId } : {}),
          limit: REPORT_PLACEMENT_TESTS + 1,
        }),
        workspaceBlocklists(db, workspaceId, mailboxId),
        statesOf(workspaceId, mailboxId),
        providerDomainRows(db, workspaceId, range, mailboxId),
      ]);
      return {
        workspaceName: name ?? workspaceId,
        generatedAt: clock.now().toISOString(),
        range,
        mailboxId: mailboxId ?? null,
        totals: series.totals,
        rates: ratesOf(series.totals),
        daily: series.daily,
        mailboxes: mailboxes.map((m) => ({ ...m, rates: ratesOf(m), state: states.get(m.mailboxId)! })),
        checks,
        byProvider: placementByProvider(mailboxes),
        verdicts,
        placementTests: tests.slice(0, REPORT_PLACEMENT_TESTS).map(placementTestView),
        placementTestsCapped: tests.length > REPORT_PLACEMENT_TESTS,
        blocklists,
        domains,
      };
    },

    async dailySummary(workspaceId: string, query: DailySummaryQuery): Promise<DailySummary> {
      const date = query.date === undefined ? today() : parseDay(query.date, '/query/date');
      return cached(cacheKey('daily-summary', workspaceId, date), async () => {
        const collect = async () => {
          const rows = await repository.mailboxesOnDay(workspaceId, date, addDays(date, -1));
          // A mailbox scored neither that day nor the day before (paused, new) carries an older score, if any.
          // …and so does a mailbox scored that day but not the day before, for its change.
          const unscored = rows.filter((r) => r.previousReputation === null).map((r) => r.id);
          const older =
            unscored.length > 0
              ? await repository.lastScoresBefore(workspaceId, addDays(date, -1), unscored)
              : new Map<string, number>();
          // The change the table shows: each mailbox scored that day against its score before
          // (the day before, an older one, or the score every mailbox starts from), averaged.
          const changes = rows
            .filter((row) => row.reputation !== null)
            .map((row) => row.reputation! - (row.previousReputation ?? older.get(row.id) ?? STARTING_REPUTATION));
          reputationChange = changes.length === 0 ? 0 : Math.round(changes.reduce((a, b) => a + b, 0) / changes.length);
          // once, not per mailbox: reading the clock and formatting its day each time was 3–4 % of the work at 10,000 mailboxes
          const future = date > today();
          return rows
            .map((row) => ({
              mailboxId: row.id,
              email: row.email,
              status: row.status,
              sent: row.sent,
              received: row.received,
              inbox: row.inbox,
              spam: row.spam,
              replied: row.replied,
              promotedToPrimary: row.promotedToPrimary,
              reputation: future ? null : (row.reputation ?? row.previousReputation ?? older.get(row.id) ?? null),
            }))
            .sort(byMailboxEmail);
        };
        let reputationChange = 0;
        // The day's counters as the analytics series has them (the workspace rollup once folded);
        // the mailboxes by status from the listing itself, not from a second read of every mailbox.
        const [day, mailboxes] = await Promise.all([
          repository.rangeTotals(workspaceId, { startDate: date, endDate: date }),
          collect(),
        ]);
        const byStatus: Record<MailboxStatus, number> = { active: 0, paused: 0, error: 0 };
        for (const mailbox of mailboxes) byStatus[mailbox.status] += 1;
        return {
          date,
          ...dayCountsOf(day),
          activeMailboxes: byStatus.active,
          pausedMailboxes: byStatus.paused,
          errorMailboxes: byStatus.error,
          reputationChange,
          mailboxes,
        };
      });
    },

    async mailboxStats(workspaceId: string, mailboxId: string, query: PeriodInput): Promise<MailboxStats> {
      const day = today();
      const range = resolvePeriod(query, day);
      return cached(cacheKey('mailbox', workspaceId, mailboxId, range.startDate, range.endDate), async () => {
        const mailbox = await requireMailbox(workspaceId, mailboxId);
        const includesToday = range.startDate <= day && day <= range.endDate;
        const [{ daily, totals }, todayTotals] = await Promise.all([
          dailySeries(workspaceId, range, mailboxId),
          // Today is usually the last day of the series already.
          includesToday ? undefined : repository.rangeTotals(workspaceId, { startDate: day, endDate: day }, mailboxId),
        ]);
        const todayRow = daily.find((row) => row.date === day);
        return {
          mailboxId: mailbox.id,
          status: mailbox.status,
          reputation: mailbox.reputation,
          warmupDay: mailbox.warmupDay,
          dailyTarget: mailbox.dailyTarget,
          todaySent: todayTotals?.sent ?? todayRow?.sent ?? 0,
          todayReceived: todayTotals?.received ?? todayRow?.received ?? 0,
          totals,
          rates: ratesOf(totals),
          daily,
        };
      });
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
