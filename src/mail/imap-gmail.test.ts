// The IMAP session against a Gmail-like server (test/helpers/gmail-imap-server.ts): X-GM-EXT-1
// detected, the tab of INBOX mail told by a bounded number of X-GM-RAW searches, [Gmail]/Spam known
// by its special-use flag, All Mail never a second place to find a message, the move to Primary
// reported as done only when Gmail shows it, and \Important set through X-GM-LABELS.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  gmailImapConfig,
  startGmailServerForStack,
  type GmailImapServer,
} from '../../test/helpers/gmail-imap-server.js';
import { describeWithMailStack, requireMailStack } from '../../test/mailstack/use-mail-stack.js';
import { classifyFolder, openImapSession, type ImapSession } from './imap.js';

const gwen = { email: 'gwen@gmail-like.test', password: 'gwen-pass-123' };
let counter = 0;

function message(subject: string): { id: string; raw: Buffer } {
  counter += 1;
  const id = `<t${counter}.${Date.now().toString(36)}@sender.test>`;
  const raw = Buffer.from(
    [
      'From: "Sam Sender" <sam@sender.test>',
      `To: ${gwen.email}`,
      `Subject: ${subject}`,
      `Message-ID: ${id}`,
      'Date: Mon, 03 Mar 2025 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello there.',
      '',
    ].join('\r\n'),
  );
  return { id, raw };
}

describe('classifyFolder on Gmail', () => {
  it('knows the spam folder by its special-use flag, whatever its name', () => {
    expect(classifyFolder({ path: '[Google Mail]/Pourriel', delimiter: '/', specialUse: '\\Junk' })).toBe('spam');
    expect(classifyFolder({ path: '[Gmail]/Spam', delimiter: '/', specialUse: '\\Junk' })).toBe('spam');
    expect(classifyFolder({ path: '[Gmail]/Alle Nachrichten', delimiter: '/', specialUse: '\\All' })).toBe('archive');
  });
});

describeWithMailStack('IMAP on a Gmail-like server (X-GM-EXT-1)', () => {
  const stack = requireMailStack();
  let server: GmailImapServer;
  let honouring: GmailImapServer;
  const sessions: ImapSession[] = [];

  beforeAll(async () => {
    server = await startGmailServerForStack(stack, { users: [gwen] });
    honouring = await startGmailServerForStack(stack, { users: [gwen], writableCategories: ['promotions'] });
  });
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.close();
  });
  afterAll(async () => {
    await server?.close();
    await honouring?.close();
  });

  async function open(on: GmailImapServer): Promise<ImapSession> {
    const session = await openImapSession(gmailImapConfig(stack, on, gwen), { timeoutMs: 5_000 });
    sessions.push(session);
    return session;
  }

  it('detects X-GM-EXT-1 and names Gmail folders by their special-use flags', async () => {
    const session = await open(server);
    expect(await session.isGmail!()).toBe(true);
    const folders = await session.folders();
    const byPath = new Map(folders.map((f) => [f.path, f]));
    expect(byPath.get('[Gmail]/Spam')).toMatchObject({ role: 'spam', specialUse: '\\Junk' });
    expect(byPath.get('[Gmail]/All Mail')).toMatchObject({ role: 'archive', specialUse: '\\All' });
    expect(byPath.get('[Gmail]/Important')?.specialUse).toBe('\\Important');
    expect(byPath.has('[Gmail]')).toBe(false);
  });

  it('tells the tab of INBOX mail with four X-GM-RAW searches, spam by folder, and All Mail only for archived mail', async () => {
    const primary = message('primary');
    const promo = message('promo');
    const updates = message('updates');
    const spam = message('spam');
    const archived = message('archived');
    server.deliver(gwen.email, primary.raw, { category: 'primary' });
    server.deliver(gwen.email, promo.raw, { category: 'promotions' });
    server.deliver(gwen.email, updates.raw, { category: 'updates' });
    server.deliver(gwen.email, spam.raw, { spam: true });
    server.deliver(gwen.email, archived.raw).labels.delete('\\Inbox');

    const session = await open(server);
    const before = server.commands.length;
    const found = await session.findMessages([primary.id, promo.id, updates.id, spam.id, archived.id], {
      everyCopy: true,
    });
    const sent = server.commands.slice(before);
    const byId = new Map(found.map((f) => [f.messageId, f]));
    // each once, though All Mail holds every one of them but the spam
    expect(found).toHaveLength(5);
    expect(byId.get(primary.id)).toMatchObject({ folder: 'INBOX', role: 'inbox', category: 'primary' });
    expect(byId.get(promo.id)).toMatchObject({ folder: 'INBOX', role: 'inbox', category: 'promotions' });
    expect(byId.get(updates.id)).toMatchObject({ folder: 'INBOX', category: 'updates' });
    expect(byId.get(spam.id)).toMatchObject({ folder: '[Gmail]/Spam', role: 'spam' });
    expect(byId.get(spam.id)?.category).toBeUndefined();
    expect(byId.get(archived.id)).toMatchObject({ folder: '[Gmail]/All Mail', role: 'archive' });
    expect(byId.get(promo.id)?.labels).toContain('\\Inbox');
    // one search per tab other than Primary, for all the INBOX mail at once
    const raws = sent.filter((line) => line.includes('X-GM-RAW'));
    expect(raws).toHaveLength(4);
    expect(raws.map((line) => /category:(\w+)/.exec(line)?.[1]).sort()).toEqual([
      'forums',
      'promotions',
      'social',
      'updates',
    ]);
    // All Mail was asked last, and only for what was nowhere else
    const selects = sent.filter((line) => / SELECT /.test(line));
    expect(selects[selects.length - 1]).toContain('[Gmail]/All Mail');
  });

  it('counts the move to Primary only when Gmail shows it, and marks Important through X-GM-LABELS', async () => {
    const stuck = message('stays in promotions');
    server.deliver(gwen.email, stuck.raw, { category: 'promotions' });
    const moves = message('leaves promotions');
    honouring.deliver(gwen.email, moves.raw, { category: 'promotions' });

    const refusing = await open(server);
    const [inPromotions] = await refusing.findMessages([stuck.id]);
    expect(inPromotions?.category).toBe('promotions');
    expect(await refusing.promote!('INBOX', inPromotions!.uid, 'promotions')).toBe(false);
    expect((await refusing.findMessages([stuck.id]))[0]?.category).toBe('promotions');

    const willing = await open(honouring);
    const [promoted] = await willing.findMessages([moves.id]);
    expect(await willing.promote!('INBOX', promoted!.uid, 'promotions')).toBe(true);
    expect((await willing.findMessages([moves.id]))[0]?.category).toBe('primary');
    const lines = honouring.commands.filter((line) => line.includes('-X-GM-LABELS'));
    expect(lines).toEqual([expect.stringContaining('-X-GM-LABELS (CATEGORY_PROMOTIONS)')]);

    expect(await willing.markImportant!('INBOX', promoted!.uid)).toBe(true);
    const stored = honouring.messages(gwen.email).find((m) => m.messageId === moves.id);
    expect([...stored!.labels]).toContain('\\Important');
    expect(stored!.category).toBe('primary');
  });

  it('files a message found only in All Mail by its label: it is never taken out of All Mail (Trash on Gmail)', async () => {
    const archived = message('archived, then filed');
    const stored = server.deliver(gwen.email, archived.raw);
    stored.labels.delete('\\Inbox');
    const session = await open(server);
    const [found] = await session.findMessages([archived.id]);
    expect(found?.folder).toBe('[Gmail]/All Mail');
    const warmup = await session.ensureFolder('Warmup');
    await session.move(found!.folder, found!.uid, warmup);
    expect([...stored.labels]).toEqual(['Warmup']);
    expect(stored.labels.has('\\Trash')).toBe(false);
    const [again] = await session.findMessages([archived.id], { includeFolders: ['Warmup'] });
    expect(again?.folder).toBe('Warmup');
  });

  it('looks for mail already filed in Warmup neither there nor in All Mail, which shows the filed copy too', async () => {
    const filed = message('filed before');
    server.deliver(gwen.email, filed.raw);
    const session = await open(server);
    const [inbox] = await session.findMessages([filed.id]);
    await session.move(inbox!.folder, inbox!.uid, await session.ensureFolder('Warmup'));
    const look = () => session.findMessages([filed.id], { includeFolders: ['Warmup'], filedAlready: [filed.id] });
    expect(await look()).toEqual([]);
    // delivered again: the copy in the inbox is found, not the filed one
    server.deliver(gwen.email, filed.raw);
    expect((await look()).map((x) => x.folder)).toEqual(['INBOX']);
  });
});
