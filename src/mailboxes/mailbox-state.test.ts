import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailConnectionError, type MailConnectionErrorInit } from '../mail/errors.js';
import { insertMailbox, insertWorkspace } from '../../test/helpers/engine-fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import {
  applyMailboxEvent,
  MAX_PERMANENT_FAILURES,
  permanentError,
  retryDelayMs,
  RETRY_MAX_MS,
  transition,
  type MailboxEvent,
  type MailboxState,
} from './mailbox-state.js';

const AT = new Date('2026-03-02T10:00:00.000Z');
const minutes = (n: number) => n * 60_000;
const half = () => 0.5;

const ACTIVE: MailboxState = {
  status: 'active',
  lastError: null,
  sendFailures: 0,
  syncFailures: 0,
  sendRetries: 0,
  syncRetries: 0,
  nextSendAt: null,
  nextSyncAt: null,
  pausedFor: null,
  activeSince: null,
};

function mailError(init: Partial<MailConnectionErrorInit> & Pick<MailConnectionErrorInit, 'kind'>) {
  return new MailConnectionError({ side: 'smtp', message: 'failed', host: 'mail.example.org', port: 587, ...init });
}
const smtpDown = mailError({
  kind: 'connection',
  code: 'ECONNREFUSED',
  message: 'Cannot connect to SMTP server mail.example.org:587: connection refused',
});
const smtpTempAuth = mailError({
  kind: 'auth',
  message: 'SMTP login refused by mail.example.org:587: 454 4.7.0 Temporary authentication failure',
  serverResponse: '454 4.7.0 Temporary authentication failure',
});
const smtpBadPassword = mailError({
  kind: 'auth',
  message: 'SMTP login refused by mail.example.org:587: 535 5.7.8 Error: authentication failed',
  serverResponse: '535 5.7.8 Error: authentication failed',
});
const imapDown = mailError({
  side: 'imap',
  port: 993,
  kind: 'timeout',
  message: 'IMAP server mail.example.org:993 did not answer within 30 s',
});
const imapBadPassword = mailError({
  side: 'imap',
  port: 993,
  kind: 'auth',
  message: 'IMAP login refused by mail.example.org:993: Authentication failed.',
  serverResponse: 'NO [AUTHENTICATIONFAILED] Authentication failed.',
});

const sendFailed = (error: MailConnectionError, at = AT): MailboxEvent => ({
  type: 'send-failed',
  error,
  at,
  random: half,
});
const syncFailed = (error: MailConnectionError, at = AT): MailboxEvent => ({
  type: 'sync-failed',
  error,
  at,
  random: half,
});

function run(state: MailboxState, ...events: MailboxEvent[]): MailboxState {
  return events.reduce((s, e) => transition(s, e) ?? s, state);
}

describe('mailbox state transitions', () => {
  describe('send failed', () => {
    it('transient: backs the sends off, stays active, and says the failure is temporary', () => {
      const next = transition(ACTIVE, sendFailed(smtpTempAuth))!;
      expect(next).toMatchObject({ status: 'active', sendRetries: 1, sendFailures: 0 });
      expect(next.nextSendAt).toBe(new Date(AT.getTime() + retryDelayMs(1, half)).toISOString());
      expect(next.lastError).toMatch(
        /^SMTP login refused by .*454 4\.7\.0 Temporary .* a temporary failure: warmup tries again by itself/,
      );
      expect(next.lastError).not.toContain('app password');
    });

    it('transient, however often: never `error`, the wait grows up to its ceiling', () => {
      const waits: number[] = [];
      let state = ACTIVE;
      for (let i = 0; i < 50; i += 1) {
        state = transition(state, sendFailed(smtpDown))!;
        waits.push(new Date(state.nextSendAt!).getTime() - AT.getTime());
      }
      expect(state).toMatchObject({ status: 'active', sendRetries: 50, sendFailures: 0 });
      expect(waits.slice(0, 3)).toEqual([minutes(0.75), minutes(1.5), minutes(3)]);
      expect(Math.max(...waits)).toBe(RETRY_MAX_MS * 0.75);
    });

    it(`permanent: counts, and the ${MAX_PERMANENT_FAILURES}rd in a row stops the mailbox with what to fix`, () => {
      const once = transition(ACTIVE, sendFailed(smtpBadPassword))!;
      expect(once).toMatchObject({ status: 'active', sendFailures: 1 });
      expect(once.lastError).toContain('failure 1 of 3');
      const stopped = run(
        ACTIVE,
        sendFailed(smtpBadPassword),
        sendFailed(smtpBadPassword),
        sendFailed(smtpBadPassword),
      );
      expect(stopped).toEqual({
        ...ACTIVE,
        status: 'error',
        lastError: 'SMTP login refused: check the app password (535 5.7.8 Error: authentication failed)',
      });
    });

    it('transient failures between permanent ones neither count nor forgive them', () => {
      const state = run(
        ACTIVE,
        sendFailed(smtpBadPassword),
        sendFailed(smtpDown),
        sendFailed(smtpBadPassword),
        sendFailed(smtpDown),
      );
      expect(state).toMatchObject({ status: 'active', sendFailures: 2, sendRetries: 1 });
      expect(transition(state, sendFailed(smtpBadPassword))).toMatchObject({ status: 'error' });
    });

    it('does nothing to a mailbox that is not active', () => {
      expect(transition({ ...ACTIVE, status: 'paused' }, sendFailed(smtpBadPassword))).toBeNull();
      expect(transition({ ...ACTIVE, status: 'error' }, sendFailed(smtpDown))).toBeNull();
    });
  });

  describe('send succeeded', () => {
    it('forgets the SMTP failures and their backoff, and the lastError that explained them', () => {
      const failing = run(ACTIVE, sendFailed(smtpDown), sendFailed(smtpBadPassword));
      expect(transition(failing, { type: 'send-succeeded' })).toEqual(ACTIVE);
    });

    it('keeps the lastError of an IMAP side that is still failing', () => {
      const failing = run(ACTIVE, syncFailed(imapDown), sendFailed(smtpDown));
      const next = transition(failing, { type: 'send-succeeded' })!;
      expect(next).toMatchObject({ sendRetries: 0, nextSendAt: null, syncRetries: 1 });
      expect(next.lastError).toBe(failing.lastError);
    });
  });

  describe('sync failed', () => {
    it('transient: backs the syncs off and stays active', () => {
      const next = transition(ACTIVE, syncFailed(imapDown))!;
      expect(next).toMatchObject({ status: 'active', syncRetries: 1, syncFailures: 0 });
      expect(next.nextSyncAt).toBe(new Date(AT.getTime() + minutes(0.75)).toISOString());
      expect(next.lastError).toMatch(/^IMAP server .* did not answer .* a temporary failure/);
    });

    it('permanent, three in a row: error with what to fix', () => {
      const stopped = run(
        ACTIVE,
        syncFailed(imapBadPassword),
        syncFailed(imapBadPassword),
        syncFailed(imapBadPassword),
      );
      expect(stopped).toMatchObject({
        status: 'error',
        syncFailures: 0,
        nextSyncAt: null,
        lastError: 'IMAP login refused: check the app password (NO [AUTHENTICATIONFAILED] Authentication failed.)',
      });
    });
  });

  describe('sync succeeded', () => {
    it('forgets the IMAP failures, schedules the next regular sync and clears lastError', () => {
      const failing = run(ACTIVE, syncFailed(imapBadPassword), syncFailed(imapDown));
      const next = new Date(AT.getTime() + minutes(4));
      expect(transition(failing, { type: 'sync-succeeded', nextSyncAt: next })).toEqual({
        ...ACTIVE,
        nextSyncAt: next.toISOString(),
      });
    });
  });

  describe('stopped (health guard, unreadable password)', () => {
    it('moves an active mailbox into error with the reason, counters cleared', () => {
      const failing = run(ACTIVE, syncFailed(imapDown));
      expect(transition(failing, { type: 'stopped', lastError: 'too much spam' })).toEqual({
        ...ACTIVE,
        status: 'error',
        lastError: 'too much spam',
      });
    });

    it('leaves a paused mailbox paused', () => {
      expect(transition({ ...ACTIVE, status: 'paused' }, { type: 'stopped', lastError: 'x' })).toBeNull();
    });
  });

  describe('paused', () => {
    it('pauses an active or stopped mailbox and keeps its lastError', () => {
      expect(transition({ ...ACTIVE, status: 'error', lastError: 'why' }, { type: 'paused' })).toMatchObject({
        status: 'paused',
        lastError: 'why',
      });
      expect(transition(ACTIVE, { type: 'paused' })).toMatchObject({ status: 'paused' });
      expect(transition({ ...ACTIVE, status: 'paused' }, { type: 'paused' })).toBeNull();
    });
  });

  describe('the DNS rule (dns-failed, dns-fixed)', () => {
    const why = 'Warmup paused: the SPF record of example.org has failed for 72 hours. Fix: …';

    it('pauses an active mailbox with the reason, and resumes it once fixed with nothing left over', () => {
      const paused = transition({ ...ACTIVE, sendRetries: 2 }, { type: 'dns-failed', lastError: why });
      expect(paused).toEqual({ ...ACTIVE, status: 'paused', pausedFor: 'dns', lastError: why });
      expect(transition(paused!, { type: 'dns-fixed', at: AT })).toEqual({ ...ACTIVE, activeSince: AT.toISOString() });
    });

    it('leaves a mailbox the owner paused, or the engine stopped, alone either way', () => {
      const ownerPaused = { ...ACTIVE, status: 'paused' as const };
      const stopped = { ...ACTIVE, status: 'error' as const, lastError: 'SMTP login refused' };
      for (const state of [ownerPaused, stopped]) {
        expect(transition(state, { type: 'dns-failed', lastError: why })).toBeNull();
        expect(transition(state, { type: 'dns-fixed', at: AT })).toBeNull();
      }
      expect(transition(ACTIVE, { type: 'dns-fixed', at: AT })).toBeNull();
    });

    it("becomes the owner's pause when the owner pauses it: fixing DNS then does not resume it", () => {
      const byRule = transition(ACTIVE, { type: 'dns-failed', lastError: why })!;
      const byOwner = transition(byRule, { type: 'paused' })!;
      expect(byOwner).toMatchObject({ status: 'paused', pausedFor: null, lastError: why });
      expect(transition(byOwner, { type: 'dns-fixed', at: AT })).toBeNull();
      expect(transition(byRule, { type: 'resumed', at: AT })).toEqual({ ...ACTIVE, activeSince: AT.toISOString() });
    });
  });

  describe('resumed', () => {
    it('starts from zero on both sides: two old sync failures do not stop it at the next one', () => {
      const twoSyncFailures = run(ACTIVE, syncFailed(imapBadPassword), syncFailed(imapBadPassword));
      const paused = transition(twoSyncFailures, { type: 'paused' })!;
      const resumed = transition(paused, { type: 'resumed', at: AT })!;
      expect(resumed).toEqual({ ...ACTIVE, activeSince: AT.toISOString() });
      expect(transition(resumed, syncFailed(imapBadPassword))).toMatchObject({ status: 'active', syncFailures: 1 });
    });

    it('does nothing to an active mailbox', () => {
      expect(transition(ACTIVE, { type: 'resumed', at: AT })).toBeNull();
    });
  });

  describe('reconnected', () => {
    it('brings a stopped mailbox back with every counter cleared, active again from now', () => {
      const stopped = { ...ACTIVE, status: 'error' as const, lastError: 'SMTP login refused', syncFailures: 2 };
      expect(transition(stopped, { type: 'reconnected', at: AT })).toEqual({
        ...ACTIVE,
        activeSince: AT.toISOString(),
      });
    });

    it('leaves a paused mailbox paused (new settings are not a resume)', () => {
      const paused = { ...ACTIVE, status: 'paused' as const, sendFailures: 2, syncRetries: 4 };
      expect(transition(paused, { type: 'reconnected', at: AT })).toEqual({ ...ACTIVE, status: 'paused' });
    });

    it('leaves an active mailbox active since when it was (new settings are not a restart)', () => {
      const since = '2026-03-01T09:00:00.000Z';
      const active = { ...ACTIVE, sendRetries: 2, activeSince: since };
      expect(transition(active, { type: 'reconnected', at: AT })).toEqual({ ...ACTIVE, activeSince: since });
    });
  });
});

describe('permanentError', () => {
  it('tells an OAuth mailbox refused with a fresh token what to check, not an app password', () => {
    const refused = (code?: string) =>
      new MailConnectionError({
        side: 'smtp',
        kind: 'auth',
        message: 'SMTP login refused',
        host: 'smtp.office365.com',
        port: 587,
        serverResponse: '535 5.7.3 Authentication unsuccessful',
        ...(code ? { code } : {}),
      });
    expect(permanentError(refused('OAUTH_REFUSED'))).toBe(
      'SMTP login refused with a valid OAuth token: check that SMTP AUTH is allowed for this mailbox, or reconnect it (535 5.7.3 Authentication unsuccessful)',
    );
    expect(permanentError(refused())).toMatch(/^SMTP login refused: check the app password/);
  });
});

describe('retryDelayMs', () => {
  it('doubles from 1 min to 30 min, drawn between half and all of it', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, () => 1))).toEqual([1, 2, 4, 8, 16, 30, 30].map(minutes));
    expect(retryDelayMs(3, () => 0)).toBe(minutes(2));
  });
});

describe('applyMailboxEvent', () => {
  let database: TestDatabase;
  let workspaceId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    workspaceId = await insertWorkspace(database.db);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('writes the transition and reports when it stopped the mailbox', async () => {
    const mailbox = await insertMailbox(database.db, workspaceId, { email: 'state-1@example.org' });
    for (let i = 1; i < MAX_PERMANENT_FAILURES; i += 1) {
      const applied = await applyMailboxEvent(database.db, mailbox.id, sendFailed(smtpBadPassword), { at: AT });
      expect(applied).toMatchObject({ changed: true, stopped: false, row: { status: 'active', failure_count: i } });
    }
    const last = await applyMailboxEvent(database.db, mailbox.id, sendFailed(smtpBadPassword), { at: AT });
    expect(last).toMatchObject({
      changed: true,
      stopped: true,
      row: { status: 'error', failure_count: 0, updated_at: AT.toISOString() },
    });
    expect(last!.row.last_error).toMatch(/^SMTP login refused: check the app password/);
  });

  it('changes nothing when the event does not apply', async () => {
    const mailbox = await insertMailbox(database.db, workspaceId, { email: 'state-2@example.org', status: 'paused' });
    const applied = await applyMailboxEvent(database.db, mailbox.id, sendFailed(smtpDown));
    expect(applied).toMatchObject({ changed: false, row: { status: 'paused', send_retries: 0 } });
  });

  it('decides again on the current state when another writer changed it first', async () => {
    const mailbox = await insertMailbox(database.db, workspaceId, { email: 'state-3@example.org' });
    // Two workers fail the same mailbox at once: both failures are counted, none is lost.
    await Promise.all([
      applyMailboxEvent(database.db, mailbox.id, syncFailed(imapDown)),
      applyMailboxEvent(database.db, mailbox.id, syncFailed(imapDown)),
    ]);
    const row = await database.db
      .selectFrom('mailboxes')
      .selectAll()
      .where('id', '=', mailbox.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.sync_retries)).toBe(2);
  });

  it('writes a status change and its webhook event together: when the event cannot be written, neither is', async () => {
    const workspace = await insertWorkspace(database.db, 'outbox');
    const mailbox = await insertMailbox(database.db, workspace, { email: 'state-5@example.org' });
    await database.db
      .insertInto('webhook_endpoints')
      .values({
        id: 'whe_state',
        workspace_id: workspace,
        url: 'https://hooks.example.com/warmup',
        description: null,
        events: JSON.stringify(['mailbox.error']),
        secret_encrypted: 'x',
        enabled: 1,
        created_at: AT.toISOString(),
        updated_at: AT.toISOString(),
      })
      .execute();
    const stop: MailboxEvent = { type: 'stopped', lastError: 'Warmup stopped: 45 % in spam' };
    // the outbox cannot take the event (as if the process died before writing it)
    await sql`alter table webhook_deliveries rename to webhook_deliveries_away`.execute(database.db);
    try {
      await expect(applyMailboxEvent(database.db, mailbox.id, stop, { at: AT })).rejects.toThrow();
    } finally {
      await sql`alter table webhook_deliveries_away rename to webhook_deliveries`.execute(database.db);
    }
    const row = await database.db
      .selectFrom('mailboxes')
      .select('status')
      .where('id', '=', mailbox.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('active');

    expect(await applyMailboxEvent(database.db, mailbox.id, stop, { at: AT })).toMatchObject({ stopped: true });
    const events = await database.db
      .selectFrom('webhook_events')
      .select('type')
      .where('workspace_id', '=', workspace)
      .execute();
    expect(events).toEqual([{ type: 'mailbox.error' }]);
  });

  it('records since when a mailbox is stopped, keeps it through a pause, and clears it once it works again', async () => {
    const mailbox = await insertMailbox(database.db, workspaceId, { email: 'state-5@example.org' });
    const stopAt = new Date(AT.getTime() + 60_000);
    const stopped = await applyMailboxEvent(
      database.db,
      mailbox.id,
      { type: 'stopped', lastError: 'Warmup stopped: 45 % in spam' },
      { at: stopAt },
    );
    expect(stopped?.row.stopped_at).toBe(stopAt.toISOString());
    const paused = await applyMailboxEvent(
      database.db,
      mailbox.id,
      { type: 'paused' },
      { at: new Date(AT.getTime() + 120_000) },
    );
    expect(paused?.row).toMatchObject({ status: 'paused', stopped_at: stopAt.toISOString() });
    const resumeAt = new Date(AT.getTime() + 180_000);
    const resumed = await applyMailboxEvent(
      database.db,
      mailbox.id,
      { type: 'resumed', at: resumeAt },
      { at: resumeAt },
    );
    expect(resumed?.row).toMatchObject({ status: 'active', stopped_at: null });
  });

  it('stays inside the workspace it is given', async () => {
    const mailbox = await insertMailbox(database.db, workspaceId, { email: 'state-4@example.org' });
    expect(await applyMailboxEvent(database.db, mailbox.id, { type: 'paused' }, { workspaceId: 'ws_other' })).toBe(
      undefined,
    );
  });
});
