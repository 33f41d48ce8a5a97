// What a peer's copy of a mailbox's warmup mail says about how it sends: the DKIM selector and the
// sending address, parsed from real header shapes, kept in the database (SQLite, or PostgreSQL with
// WARMUP_TEST_DB=postgres), and read from a copy on the real IMAP server.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMailbox, insertWorkspace } from '../../test/helpers/engine-fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { describeWithMailStack, mailServerConfigs, requireMailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import { openImapSession } from '../mail/imap.js';
import { dkimSelectorOf, MAX_SENDING_IPS, noteSenderEvidence, sendingIpOf } from './sender-evidence.js';

/** As Gmail delivers mail from a Google Workspace domain: the receiver's hops on top, then its MX's. */
const GMAIL_STYLE = [
  'Received: by 2002:a05:6a10:c8c:b0:5a1:1b2c:3d4e with SMTP id ab12csp123;',
  '        Mon, 2 Mar 2026 01:02:03 -0800 (PST)',
  'Received: from mail-sor-f41.google.com (mail-sor-f41.google.com. [209.85.220.41])',
  '        by mx.google.com with SMTPS id x1sor123.2026.03.02.01.02.03',
  '        for <frank@foxtrot.test>;',
  '        Mon, 02 Mar 2026 01:02:03 -0800 (PST)',
  'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;',
  '        d=google.com; s=20230601; h=from:to:subject; bh=abc=; b=def=',
  'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;',
  '        d=echo.test; s=google;',
  '        h=to:subject:message-id:date:from:from:to:cc:subject:date:message-id:reply-to;',
  '        bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGhpcyBpcyBub3QgYSByZWFsIHNpZ25hdHVyZQ==',
  'Received: from [192.168.1.20] (dsl.example.net [10.0.0.7])',
  '        by smtp.gmail.com with ESMTPSA id y2sm1.2026.03.02.01.02.02',
  '',
].join('\r\n');

describe('dkimSelectorOf', () => {
  it("takes the selector of the signature made for the sender's domain, not the provider's own", () => {
    expect(dkimSelectorOf(GMAIL_STYLE, 'echo.test')).toBe('google');
    expect(dkimSelectorOf(GMAIL_STYLE, 'ECHO.test')).toBe('google');
  });

  it('accepts a parent domain (relaxed alignment) but prefers the exact one, and ignores broken tags', () => {
    const parent = 'DKIM-Signature: v=1; d=example.org; s=k1; b=x\r\n';
    const exact = 'DKIM-Signature: v=1; d=mail.example.org; s=k2; b=x\r\n';
    expect(dkimSelectorOf(parent, 'mail.example.org')).toBe('k1');
    expect(dkimSelectorOf(parent + exact, 'mail.example.org')).toBe('k2');
    expect(dkimSelectorOf('DKIM-Signature: v=1; d=example.org; s=bad selector!; b=x\r\n', 'example.org')).toBe(
      undefined,
    );
    expect(dkimSelectorOf('DKIM-Signature: v=1; d=other.org; s=k1\r\n', 'example.org')).toBeUndefined();
    expect(dkimSelectorOf('Subject: hi\r\n', 'example.org')).toBeUndefined();
  });
});

describe('sendingIpOf', () => {
  it("takes the first public address from the top: the sending server the receiver's MX saw", () => {
    expect(sendingIpOf(GMAIL_STYLE)).toBe('209.85.220.41');
    expect(sendingIpOf('Received: from out.example.net ([IPv6:2a00:1450:4864:20::42a]) by mx.test\r\n')).toBe(
      '2a00:1450:4864:20::42a',
    );
  });

  it('skips internal hops and lines without an address, and finds none in a local delivery', () => {
    const local = [
      'Received: from localhost (localhost [127.0.0.1]) by mx.test (Postfix) with ESMTP id 1',
      'Received: by mx.test (Postfix, from userid 0) id 2',
      '',
    ].join('\r\n');
    expect(sendingIpOf(local)).toBeUndefined();
    expect(sendingIpOf('Received: from x (y [not-an-ip]) by z\r\n')).toBeUndefined();
  });

  it('reads a huge header block in linear time and only its start', () => {
    const huge = `Received: from ${'['.repeat(200_000)} by z\r\n`.repeat(3);
    const started = performance.now();
    expect(sendingIpOf(huge)).toBeUndefined();
    expect(dkimSelectorOf(`DKIM-Signature: ${';='.repeat(200_000)}\r\n`, 'example.org')).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('noteSenderEvidence', () => {
  let database: TestDatabase;
  let workspaceId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    workspaceId = await insertWorkspace(database.db);
  });
  afterAll(async () => {
    await database?.close();
  });

  async function selectorOf(id: string) {
    return database.db
      .selectFrom('mailboxes')
      .select(['dkim_selector', 'dkim_selector_source'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  }

  it('learns the selector, follows a rotation, and never replaces one the user gave', async () => {
    const erin = await insertMailbox(database.db, workspaceId, { email: 'erin@echo.test' });
    const at = new Date('2026-03-02T10:00:00.000Z');
    await noteSenderEvidence(database.db, erin.id, workspaceId, GMAIL_STYLE, at);
    expect(await selectorOf(erin.id)).toEqual({ dkim_selector: 'google', dkim_selector_source: 'mail' });
    await noteSenderEvidence(database.db, erin.id, workspaceId, 'DKIM-Signature: v=1; d=echo.test; s=google2\r\n', at);
    expect(await selectorOf(erin.id)).toEqual({ dkim_selector: 'google2', dkim_selector_source: 'mail' });

    await database.db
      .updateTable('mailboxes')
      .set({ dkim_selector: 'mine', dkim_selector_source: 'user' })
      .where('id', '=', erin.id)
      .execute();
    await noteSenderEvidence(database.db, erin.id, workspaceId, GMAIL_STYLE, at);
    expect(await selectorOf(erin.id)).toEqual({ dkim_selector: 'mine', dkim_selector_source: 'user' });
  });

  it("learns nothing from a copy another workspace's mailbox holds: that tenant writes its own headers", async () => {
    const olga = await insertMailbox(database.db, workspaceId, { email: 'olga@echo.test' });
    const otherTenant = await insertWorkspace(database.db);
    const planted =
      'DKIM-Signature: v=1; d=echo.test; s=planted\r\nReceived: from evil.example ([85.10.20.66]) by mx.test\r\n';
    await noteSenderEvidence(database.db, olga.id, otherTenant, planted, new Date('2026-03-02T10:00:00.000Z'));
    expect(await selectorOf(olga.id)).toEqual({ dkim_selector: null, dkim_selector_source: null });
    const ips = await database.db
      .selectFrom('mailbox_sending_ips')
      .select('ip')
      .where('mailbox_id', '=', olga.id)
      .execute();
    expect(ips).toEqual([]);
    // the same copy held in her own workspace is evidence
    await noteSenderEvidence(database.db, olga.id, workspaceId, planted, new Date('2026-03-02T10:00:00.000Z'));
    expect(await selectorOf(olga.id)).toEqual({ dkim_selector: 'planted', dkim_selector_source: 'mail' });
  });

  it(`keeps the sending addresses seen, the newest ${MAX_SENDING_IPS}`, async () => {
    const ivy = await insertMailbox(database.db, workspaceId, { email: 'ivy@echo.test' });
    for (let i = 0; i < MAX_SENDING_IPS + 2; i += 1) {
      const headers = `Received: from out${i}.example.net (out${i}.example.net [85.10.20.${i}]) by mx.test\r\n`;
      await noteSenderEvidence(database.db, ivy.id, workspaceId, headers, new Date(Date.UTC(2026, 2, 2, 10, i)));
    }
    // seen again: its first sighting stays, its last moves
    await noteSenderEvidence(
      database.db,
      ivy.id,
      workspaceId,
      'Received: from out5.example.net ([85.10.20.5]) by mx.test\r\n',
      new Date(Date.UTC(2026, 2, 2, 11)),
    );
    const rows = await database.db
      .selectFrom('mailbox_sending_ips')
      .select(['ip', 'first_seen_at', 'last_seen_at'])
      .where('mailbox_id', '=', ivy.id)
      .orderBy('ip')
      .execute();
    expect(rows.map((row) => row.ip)).toEqual([2, 3, 4, 5, 6, 7, 8, 9].map((i) => `85.10.20.${i}`));
    expect(rows.find((row) => row.ip === '85.10.20.5')).toEqual({
      ip: '85.10.20.5',
      first_seen_at: '2026-03-02T10:05:00.000Z',
      last_seen_at: '2026-03-02T11:00:00.000Z',
    });
  });
});

describeWithMailStack('found on the real IMAP server', () => {
  it("hands the copy's DKIM-Signature and Received fields to the evidence, and nothing else", async () => {
    const stack = requireMailStack();
    const [mona, max] = MAIL_USERS.deliverability;
    const database = await createTestDatabase();
    try {
      const workspaceId = await insertWorkspace(database.db);
      const sender = await insertMailbox(database.db, workspaceId, { email: mona!.email });
      const messageId = `<${randomUUID()}@metrics-one.test>`;
      const raw = [
        'Received: from out.metrics-one.test (out.metrics-one.test [85.10.20.99]) by mx.metrics-two.test',
        `DKIM-Signature: v=1; a=rsa-sha256; d=metrics-one.test; s=sel2026;`,
        '  h=from:to:subject; bh=abc=; b=def=',
        `From: Mona <${mona!.email}>`,
        `To: ${max!.email}`,
        'Subject: Quarterly numbers',
        `Message-ID: ${messageId}`,
        'Date: Mon, 02 Mar 2026 10:00:00 +0000',
        '',
        'Hi Max',
        '',
      ].join('\r\n');
      const session = await openImapSession(mailServerConfigs(stack, max!).imap, { timeoutMs: 10_000 });
      try {
        await session.append('INBOX', raw);
        const [found] = await session.findMessages([messageId]);
        expect(found?.deliveryHeaders).toContain('s=sel2026');
        expect(found?.deliveryHeaders).not.toContain('Subject:');
        await noteSenderEvidence(database.db, sender.id, workspaceId, found?.deliveryHeaders, new Date());
      } finally {
        await session.close();
      }
      const row = await database.db
        .selectFrom('mailboxes')
        .select(['dkim_selector', 'dkim_selector_source'])
        .where('id', '=', sender.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ dkim_selector: 'sel2026', dkim_selector_source: 'mail' });
      const ips = await database.db.selectFrom('mailbox_sending_ips').select('ip').execute();
      expect(ips).toEqual([{ ip: '85.10.20.99' }]);
    } finally {
      await database.close();
    }
  });
});
