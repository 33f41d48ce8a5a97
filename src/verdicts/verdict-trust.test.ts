// A hostile tenant against another's receiver verdicts, on the real mail stack: its receiver in the
// shared pool holds the victim's warmup mail and writes whatever Authentication-Results it likes
// into its own mailbox, failing and passing, under its own domain or Google's name. The engine
// finds that mail, yet the victim's verdicts and problems stay exactly what its own receivers said.
import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import type { Database, MailboxRow } from '../db/schema.js';
import { syncMailboxes } from '../engine/reader.js';
import { openImapSession } from '../mail/imap.js';
import { createStackMailbox, proveAll, testEngineDeps } from '../../test/helpers/engine.js';
import { insertMessage } from '../../test/helpers/engine-fixtures.js';
import { createTestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { describeWithMailStack, mailServerConfigs, requireMailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS, type MailUser } from '../../test/mailstack/users.js';
import type { MailboxVerdicts } from './verdicts.schemas.js';

const [val, tim, hugo] = MAIL_USERS.verdictTrust;

describeWithMailStack('receiver verdicts from another workspace', () => {
  it(
    "a hostile tenant's receiver, failing or passing the victim's mail, moves neither its verdicts nor its problems",
    { timeout: 120_000 },
    async () => {
      const stack = requireMailStack();
      const now = new Date(Math.floor(Date.now() / 60_000) * 60_000);
      const t = await createTestApp({ clock: fixedClock(now) });
      const db: Kysely<Database> = t.database.db;
      try {
        const hostile = await t.createWorkspace('hostile');
        const valId = await createStackMailbox(t.workspace, stack, val!);
        const timId = await createStackMailbox(t.workspace, stack, tim!);
        const hugoId = await createStackMailbox(hostile, stack, hugo!);
        await proveAll(db);
        const row = (id: string) =>
          db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        const [sender, team, enemy] = await Promise.all([row(valId), row(timId), row(hugoId)]);
        const deps = testEngineDeps(t);

        /** A warmup email of val's to `to`, delivered with the given receiver fields on top. */
        async function delivered(to: MailboxRow, user: MailUser, authResults: string): Promise<string> {
          const sentAt = new Date(now.getTime() - 30 * 60_000);
          const message = await insertMessage(db, {
            sender,
            recipient: to,
            dueAt: sentAt,
            status: 'sent',
            sentAt,
            subject: 'Quarter plans',
            body: 'Hi there',
          });
          const raw = [
            `Authentication-Results: ${authResults}`,
            `From: Val <${val!.email}>`,
            `To: ${user.email}`,
            'Subject: Quarter plans',
            `Message-ID: ${message.message_id}`,
            `Date: ${sentAt.toUTCString().replace('GMT', '+0000')}`,
            '',
            'Hi there',
            '',
          ].join('\r\n');
          const session = await openImapSession(mailServerConfigs(stack, user).imap, { timeoutMs: 10_000 });
          try {
            await session.append('INBOX', raw);
          } finally {
            await session.close();
          }
          return message.id;
        }

        async function sync(ids: string[]): Promise<void> {
          const summary = await syncMailboxes(deps, { now, ignoreSchedule: true });
          expect(summary.mailboxErrors).toEqual([]);
          // the engine did find every one of them: only its verdict is left out
          const found = await db.selectFrom('warmup_messages').select('found_at').where('id', 'in', ids).execute();
          expect(found.map((m) => m.found_at)).toEqual(ids.map(() => now.toISOString()));
        }

        async function verdictsOf(workspace: TestWorkspace, mailboxId: string): Promise<MailboxVerdicts> {
          const response = await workspace.request({ method: 'GET', url: `/api/mailboxes/${mailboxId}/verdicts` });
          expect(response.statusCode, response.body).toBe(200);
          return (response.json() as { verdicts: MailboxVerdicts }).verdicts;
        }

        // Val's own workspace's receiver saw her DKIM fail: that counts, and is a problem to fix.
        await sync([await delivered(team, tim!, 'verdict-team.test; spf=pass; dkim=fail; dmarc=fail')]);
        const before = await verdictsOf(t.workspace, valId);
        expect(before.total).toBe(1);
        expect(before.problems.map((p) => p.code).sort()).toEqual(['dkim_fail', 'dmarc_fail']);

        // The hostile receiver writes results under its own domain, failing and passing.
        await sync([
          await delivered(enemy, hugo!, 'verdict-hostile.test; spf=fail; dkim=fail; dmarc=fail'),
          await delivered(enemy, hugo!, 'verdict-hostile.test; spf=pass; dkim=pass; dmarc=pass'),
        ]);
        expect(await verdictsOf(t.workspace, valId)).toEqual(before);

        // It claims to be Gmail and writes under Google's name: its server is still its own.
        await db.updateTable('mailboxes').set({ provider: 'gmail' }).where('id', '=', hugoId).execute();
        await sync([
          await delivered(enemy, hugo!, 'mx.google.com; spf=fail; dkim=fail; dmarc=fail'),
          await delivered(enemy, hugo!, 'mx.google.com; spf=pass; dkim=pass; dmarc=pass'),
        ]);
        expect(await verdictsOf(t.workspace, valId)).toEqual(before);
        const recorded = await db
          .selectFrom('receiver_verdicts')
          .select('recipient_mailbox_id')
          .where('sender_mailbox_id', '=', valId)
          .execute();
        expect(recorded).toEqual([{ recipient_mailbox_id: timId }]);
      } finally {
        await t.close();
      }
    },
  );
});
