// The onboarding checklist's contract: each of its four steps is ticked from what the workspace
// holds, read through GET /api/workspace/onboarding on a real database, never from another
// workspace's rows; a viewer reads it, and only an owner or admin puts it away for everyone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type TestPerson } from '../../test/helpers/accounts.js';
import { insertMailbox } from '../../test/helpers/engine-fixtures.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import type { Onboarding, OnboardingStep, OnboardingStepId } from './workspaces.schemas.js';

describe('GET /api/workspace/onboarding', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ alertMailConfigured: true });
  });
  afterAll(() => t.close());

  async function onboardingOf(as: Pick<TestWorkspace, 'request'>): Promise<Onboarding> {
    const response = await as.request({ method: 'GET', url: '/api/workspace/onboarding' });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { onboarding: Onboarding }).onboarding;
  }

  async function stepOf(as: Pick<TestWorkspace, 'request'>, id: OnboardingStepId): Promise<OnboardingStep> {
    const step = (await onboardingOf(as)).steps.find((s) => s.id === id);
    if (!step) throw new Error(`no step ${id}`);
    return step;
  }

  async function passAllChecks(mailboxId: string): Promise<void> {
    const checkedAt = t.clock.now().toISOString();
    await t.database.db
      .insertInto('mailbox_checks')
      .values(
        ['mx', 'spf', 'dmarc', 'dkim'].map((check) => ({
          mailbox_id: mailboxId,
          check,
          status: 'pass',
          detail: `${check} passes`,
          fix: null,
          checked_at: checkedAt,
          failing_since: null,
        })),
      )
      .execute();
  }

  it('starts a new workspace with four open steps, in order, and not dismissed', async () => {
    const ws = await t.createWorkspace('fresh');
    expect(await onboardingOf(ws)).toEqual({
      steps: [
        { id: 'mailboxes', done: false, detail: 'No mailbox connected yet' },
        { id: 'dns', done: false, detail: 'Nothing to check until a mailbox is connected' },
        { id: 'team', done: false, detail: 'Nobody else invited yet' },
        { id: 'alerts', done: false, detail: 'No alert set up yet' },
      ],
      complete: false,
      dismissed: false,
    });
  });

  it('ticks mailboxes only once they sit on two different domains', async () => {
    const ws = await t.createWorkspace('domains');
    await insertMailbox(t.database.db, ws.id, { email: 'anna@one.example' });
    await insertMailbox(t.database.db, ws.id, { email: 'ben@ONE.example' });
    expect(await stepOf(ws, 'mailboxes')).toEqual({ id: 'mailboxes', done: false, detail: '2 mailboxes on 1 domain' });
    // another workspace's mailbox on a second domain does not count
    const other = await t.createWorkspace('domains-other');
    await insertMailbox(t.database.db, other.id, { email: 'carl@two.example' });
    expect((await stepOf(ws, 'mailboxes')).done).toBe(false);
    await insertMailbox(t.database.db, ws.id, { email: 'dora@two.example' });
    expect(await stepOf(ws, 'mailboxes')).toEqual({ id: 'mailboxes', done: true, detail: '3 mailboxes on 2 domains' });
  });

  it('ticks DNS when every mailbox was checked with no failing check and no blocklist listing', async () => {
    const ws = await t.createWorkspace('dns');
    const first = await insertMailbox(t.database.db, ws.id, { email: 'anna@dns-one.example' });
    const second = await insertMailbox(t.database.db, ws.id, { email: 'ben@dns-two.example' });
    expect(await stepOf(ws, 'dns')).toEqual({ id: 'dns', done: false, detail: '2 mailboxes not checked yet' });
    await passAllChecks(first.id);
    expect(await stepOf(ws, 'dns')).toEqual({ id: 'dns', done: false, detail: '1 mailbox not checked yet' });
    await passAllChecks(second.id);
    expect(await stepOf(ws, 'dns')).toMatchObject({ id: 'dns', done: true });

    // another workspace's failing check leaves this one ticked
    const other = await t.createWorkspace('dns-other');
    const foreign = await insertMailbox(t.database.db, other.id, { email: 'eve@dns-three.example' });
    await passAllChecks(foreign.id);
    await t.database.db
      .updateTable('mailbox_checks')
      .set({ status: 'fail' })
      .where('mailbox_id', '=', foreign.id)
      .where('check', '=', 'spf')
      .execute();
    expect((await stepOf(ws, 'dns')).done).toBe(true);
    expect(await stepOf(other, 'dns')).toEqual({ id: 'dns', done: false, detail: '1 failing DNS check' });

    await t.database.db
      .updateTable('mailbox_checks')
      .set({ status: 'fail' })
      .where('mailbox_id', '=', second.id)
      .where('check', 'in', ['spf', 'dmarc'])
      .execute();
    expect(await stepOf(ws, 'dns')).toEqual({ id: 'dns', done: false, detail: '2 failing DNS checks' });
    await t.database.db
      .updateTable('mailbox_checks')
      .set({ status: 'pass' })
      .where('mailbox_id', '=', second.id)
      .execute();
    // an unanswered check is no problem of the domain's
    await t.database.db
      .updateTable('mailbox_checks')
      .set({ status: 'unreachable' })
      .where('mailbox_id', '=', first.id)
      .where('check', '=', 'mx')
      .execute();
    expect((await stepOf(ws, 'dns')).done).toBe(true);

    const listing = {
      mailbox_id: first.id,
      zone: 'Spamhaus DBL',
      subject: 'dns-one.example',
      kind: 'domain',
      status: 'listed',
      detail: 'listed',
      delist_url: null,
      listed_since: t.clock.now().toISOString(),
      checked_at: t.clock.now().toISOString(),
    };
    await t.database.db.insertInto('blocklist_results').values(listing).execute();
    expect(await stepOf(ws, 'dns')).toEqual({ id: 'dns', done: false, detail: '1 blocklist listing' });
    await t.database.db
      .updateTable('blocklist_results')
      .set({ status: 'clear', listed_since: null })
      .where('mailbox_id', '=', first.id)
      .execute();
    expect((await stepOf(ws, 'dns')).done).toBe(true);
  });

  it('ticks the team on a pending invite or a second member, not on an expired or revoked invite', async () => {
    const ws = await t.createWorkspace('team');
    const owner = await createPerson(t, ws.id, 'owner');
    expect(await stepOf(owner, 'team')).toEqual({ id: 'team', done: false, detail: 'Nobody else invited yet' });

    const invited = await owner.request({ method: 'POST', url: '/api/workspace/invites', payload: { role: 'member' } });
    expect(invited.statusCode, invited.body).toBe(201);
    expect(await stepOf(owner, 'team')).toEqual({ id: 'team', done: true, detail: '1 invite waiting to be accepted' });

    await t.database.db
      .updateTable('invites')
      .set({ expires_at: new Date(t.clock.now().getTime() - 1000).toISOString() })
      .where('workspace_id', '=', ws.id)
      .execute();
    expect((await stepOf(owner, 'team')).done).toBe(false);

    const again = await owner.request({ method: 'POST', url: '/api/workspace/invites', payload: { role: 'viewer' } });
    const inviteId = (again.json() as { invite: { id: string } }).invite.id;
    expect((await stepOf(owner, 'team')).done).toBe(true);
    const revoked = await owner.request({ method: 'DELETE', url: `/api/workspace/invites/${inviteId}` });
    expect(revoked.statusCode, revoked.body).toBe(204);
    expect((await stepOf(owner, 'team')).done).toBe(false);

    await createPerson(t, ws.id, 'member');
    expect(await stepOf(owner, 'team')).toEqual({ id: 'team', done: true, detail: '2 members' });
  });

  it('ticks alerts on an email alert or a Slack destination, and unticks when the email alert is switched off', async () => {
    const ws = await t.createWorkspace('alerts');
    const admin = await createPerson(t, ws.id, 'admin');
    const on = await admin.request({ method: 'PUT', url: '/api/alerts/email', payload: { events: ['mailbox.error'] } });
    expect(on.statusCode, on.body).toBe(200);
    expect(await stepOf(admin, 'alerts')).toEqual({ id: 'alerts', done: true, detail: '1 alert set up' });
    const off = await admin.request({ method: 'PUT', url: '/api/alerts/email', payload: { events: [] } });
    expect(off.statusCode, off.body).toBe(200);
    expect((await stepOf(admin, 'alerts')).done).toBe(false);

    const slack = await admin.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { kind: 'slack', url: 'https://hooks.slack.com/services/T1/B1/onboarding', events: ['mailbox.error'] },
    });
    expect(slack.statusCode, slack.body).toBe(201);
    expect(await stepOf(admin, 'alerts')).toEqual({ id: 'alerts', done: true, detail: '1 alert set up' });
  });

  it('is complete when all four are done', async () => {
    const ws = await t.createWorkspace('complete');
    const owner = await createPerson(t, ws.id, 'owner');
    for (const email of ['a@c-one.example', 'b@c-two.example']) {
      await passAllChecks((await insertMailbox(t.database.db, ws.id, { email })).id);
    }
    await createPerson(t, ws.id, 'viewer');
    await owner.request({ method: 'PUT', url: '/api/alerts/email', payload: { events: ['mailbox.error'] } });
    const onboarding = await onboardingOf(owner);
    expect(onboarding.steps.map((s) => s.done)).toEqual([true, true, true, true]);
    expect(onboarding.complete).toBe(true);
  });

  describe('dismissal', () => {
    let ws: TestWorkspace;
    let admin: TestPerson;
    let viewer: TestPerson;
    beforeAll(async () => {
      ws = await t.createWorkspace('dismissal');
      admin = await createPerson(t, ws.id, 'admin');
      viewer = await createPerson(t, ws.id, 'viewer');
    });

    it('lets a viewer read the checklist but not put it away', async () => {
      expect((await onboardingOf(viewer)).dismissed).toBe(false);
      const refused = await viewer.request({
        method: 'PATCH',
        url: '/api/workspace/settings',
        payload: { onboardingDismissed: true },
      });
      expect(refused.statusCode).toBe(403);
      expect((await onboardingOf(viewer)).dismissed).toBe(false);
    });

    it("remembers an admin's dismissal for everyone in the workspace, and only there", async () => {
      const dismissed = await admin.request({
        method: 'PATCH',
        url: '/api/workspace/settings',
        payload: { onboardingDismissed: true },
      });
      expect(dismissed.statusCode, dismissed.body).toBe(200);
      expect(dismissed.json()).toEqual({ settings: { humanReplies: 'file', onboardingDismissed: true } });
      expect((await onboardingOf(viewer)).dismissed).toBe(true);
      expect((await onboardingOf(t.workspace)).dismissed).toBe(false);
      // changing another setting leaves the dismissal where it is
      await admin.request({ method: 'PATCH', url: '/api/workspace/settings', payload: { humanReplies: 'inbox' } });
      expect((await onboardingOf(viewer)).dismissed).toBe(true);

      const back = await admin.request({
        method: 'PATCH',
        url: '/api/workspace/settings',
        payload: { onboardingDismissed: false },
      });
      expect(back.json()).toEqual({ settings: { humanReplies: 'inbox', onboardingDismissed: false } });
      expect((await onboardingOf(viewer)).dismissed).toBe(false);
    });

    it('refuses a dismissal that is not a boolean, naming the field', async () => {
      const bad = await admin.request({
        method: 'PATCH',
        url: '/api/workspace/settings',
        payload: { onboardingDismissed: 'yes' },
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('onboardingDismissed');
    });
  });
});
