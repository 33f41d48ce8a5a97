// Every default template in every client profile, as the sender really sends it (rendered with
// variables and spintax, signed, replies with their whole quote, wrapped in the MIME message of
// that client's layout), scored by
// SpamAssassin's local rules. Warmup mail that looks like spam would teach filters the opposite
// of what it is for. One spamassassin process scores all messages (mbox), so the check is quick.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildRawMessage } from '../mail/smtp.js';
import { DEFAULT_TEMPLATES, type DefaultTemplate } from '../templates/default-templates.js';
import { CLIENT_PROFILE_NAMES, clientProfileNamed, type ClientProfileName } from './client-profile.js';
import { composeMessage, messageIdFor, replyMessageIdFor, type Party } from './message-content.js';
import { outgoingMail } from './outgoing-mail.js';
import { writeMessage, writingRegion } from '../conversations/conversation-writer.js';
import { CONVERSATION_LANGUAGES } from '../conversations/phrase-banks.js';

const MAX_SCORE = 2.0;
/** Messages per template and client profile: each Message-ID seeds other spintax choices. */
const VARIANTS = 1;
/** Threads per language written by the conversation generator, each scored at every turn. */
const GENERATED_THREADS = 8;

const spamassassin = spawnSync('spamassassin', ['-V'], { encoding: 'utf8' });
const available = spamassassin.status === 0;
if (!available && process.env.CI === 'true') {
  throw new Error('spamassassin is required under CI (apt-get install spamassassin)');
}

const PEOPLE: Record<string, { sender: Party; recipient: Party; timeZone: string }> = {
  en: {
    sender: { email: 'erin.walsh@echo-mail.com', name: 'Erin Walsh' },
    recipient: { email: 'frank@foxtrot-group.com', name: 'Frank Miller' },
    timeZone: 'America/New_York',
  },
  de: {
    sender: { email: 'greta.braun@golf-gmbh.de', name: 'Greta Braun' },
    recipient: { email: 'hans@hotel-ag.de', name: 'Hans Vogel' },
    timeZone: 'Europe/Berlin',
  },
  fr: {
    sender: { email: 'ines.martin@india-conseil.fr', name: 'Inès Martin' },
    recipient: { email: 'julien@juliet.fr', name: 'Julien Petit' },
    timeZone: 'Europe/Paris',
  },
  es: {
    sender: { email: 'lucia.garcia@lima-grupo.es', name: 'Lucía García' },
    recipient: { email: 'mateo@mike.es', name: 'Mateo López' },
    timeZone: 'Europe/Madrid',
  },
};

interface Scored {
  label: string;
  messageId: string;
  language: string;
  raw: Buffer;
  score?: number;
  tests?: string;
}

async function renderAll(): Promise<Scored[]> {
  const at = new Date('2026-03-12T14:20:00Z');
  const out: Scored[] = [];
  const initials = (language: string) =>
    DEFAULT_TEMPLATES.filter((t) => t.type === 'initial' && t.language === language);
  for (const template of DEFAULT_TEMPLATES) {
    const people = PEOPLE[template.language] ?? PEOPLE.en;
    for (let n = 0; n < VARIANTS * CLIENT_PROFILE_NAMES.length; n += 1) {
      const variant = Math.floor(n / CLIENT_PROFILE_NAMES.length);
      const profile = CLIENT_PROFILE_NAMES[n % CLIENT_PROFILE_NAMES.length];
      // the other side writes with another client
      const parentProfile = CLIENT_PROFILE_NAMES[(n + 1) % CLIENT_PROFILE_NAMES.length];
      const threadId = messageIdFor(people.sender.email, `t${variant}.${template.name.length}.${out.length}`);
      if (template.type === 'initial') {
        const content = composeMessage({
          template,
          kind: 'initial',
          ...people,
          profile,
          language: template.language,
          at,
          messageId: threadId,
          threadId,
        });
        out.push({
          label: `${template.language}/initial "${template.name}" ${profile} #${variant}`,
          messageId: threadId,
          language: template.language,
          raw: await raw(people, profile, threadId, content, at),
        });
        continue;
      }
      // A reply (or a follow-up) answers a message of the other side, and quotes it.
      const opener: DefaultTemplate = initials(template.language)[variant % initials(template.language).length];
      const parent = composeMessage({
        template: opener,
        kind: 'initial',
        sender: people.recipient,
        recipient: people.sender,
        profile: parentProfile,
        timeZone: people.timeZone,
        language: template.language,
        at: new Date(at.getTime() - 3 * 60 * 60_000),
        messageId: threadId,
        threadId,
      });
      const messageId = replyMessageIdFor(people.sender.email, threadId, profile);
      const content = composeMessage({
        template,
        kind: 'reply',
        ...people,
        profile,
        language: template.language,
        at,
        messageId,
        threadId,
        parent: {
          subject: parent.subject,
          body: parent.body,
          html: parent.html,
          sentAt: new Date(at.getTime() - 3 * 60 * 60_000),
          messageId: threadId,
        },
      });
      out.push({
        label: `${template.language}/${template.type} "${template.name}" ${profile} #${variant}`,
        messageId,
        language: template.language,
        raw: await raw(people, profile, messageId, content, at, { inReplyTo: threadId, references: [threadId] }),
      });
    }
  }
  return out;
}

/**
 * Threads of the conversation generator in every language, each message laid out by a client
 * profile and quoting the one it answers, as the sender sends them.
 */
async function renderConversations(at: Date): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const language of CONVERSATION_LANGUAGES) {
    const people = PEOPLE[language];
    for (let n = 0; n < GENERATED_THREADS; n++) {
      const threadId = messageIdFor(people.sender.email, `generated.${language}.${n}`);
      const sides = [people.sender, people.recipient];
      const regions = sides.map((side) => writingRegion('spam check installation', 'workspace', side.email));
      let parent: { subject: string; body: string; html: string; messageId: string } | undefined;
      for (let turn = 1; turn <= 4; turn++) {
        const [sender, recipient] = turn % 2 === 1 ? sides : [sides[1], sides[0]];
        const profile = CLIENT_PROFILE_NAMES[(n + turn) % CLIENT_PROFILE_NAMES.length];
        const written = writeMessage({
          threadId,
          turn,
          language,
          openerRegion: regions[0],
          writerRegion: regions[turn % 2 === 1 ? 0 : 1],
          senderFirstName: (sender.name ?? '').split(' ')[0],
          recipientFirstName: (recipient.name ?? '').split(' ')[0],
        });
        const messageId =
          turn === 1 ? threadId : replyMessageIdFor(sender.email, parent?.messageId ?? threadId, profile);
        const sentAt = new Date(at.getTime() - (4 - turn) * 60 * 60_000);
        const content = composeMessage({
          template: { subject: written.subject, body: written.body },
          kind: turn === 1 ? 'initial' : 'reply',
          sender,
          recipient,
          profile,
          language,
          timeZone: people.timeZone,
          at: sentAt,
          messageId,
          threadId,
          ...(parent
            ? {
                parent: {
                  subject: parent.subject,
                  body: parent.body,
                  html: parent.html,
                  sentAt: new Date(sentAt.getTime() - 60 * 60_000),
                  messageId: parent.messageId,
                },
              }
            : {}),
        });
        const threading = parent ? { inReplyTo: parent.messageId, references: [threadId, parent.messageId] } : {};
        out.push({
          label: `${language}/generated thread ${n} turn ${turn} ${profile}`,
          messageId,
          language,
          raw: await raw(
            { sender, recipient, timeZone: people.timeZone },
            profile,
            messageId,
            content,
            sentAt,
            threading,
          ),
        });
        parent = { ...content, messageId };
      }
    }
  }
  return out;
}

async function raw(
  people: { sender: Party; recipient: Party; timeZone: string },
  profile: ClientProfileName,
  messageId: string,
  content: { subject: string; body: string; html: string },
  date: Date,
  threading: { inReplyTo?: string; references?: string[] } = {},
): Promise<Buffer> {
  return buildRawMessage(
    outgoingMail({
      sender: people.sender,
      recipient: people.recipient,
      profile: clientProfileNamed(profile),
      messageId,
      content,
      date,
      timeZone: people.timeZone,
      ...threading,
    }),
  );
}

const SEPARATOR = 'From spam-check@localhost Thu Mar 12 14:20:00 2026';

/** One mbox for all messages; a body line starting with "From " is escaped as mbox requires. */
function toMbox(messages: Scored[]): string {
  return messages
    .map((m) => {
      const text = m.raw
        .toString('utf8')
        .replace(/\r\n/g, '\n')
        .replace(/^(>*From )/gm, '>$1');
      return `${SEPARATOR}\n${text.trimEnd()}\n\n`;
    })
    .join('');
}

/** Score and rules per Message-ID from spamassassin's mbox output (it does not keep the input order). */
function parseScores(output: string): Map<string, { score: number; tests: string }> {
  const scores = new Map<string, { score: number; tests: string }>();
  for (const chunk of output.split(`${SEPARATOR}\n`)) {
    const status = /^X-Spam-Status: (?:Yes|No), score=(-?[\d.]+) required=[\d.]+ tests=([\s\S]*?)\s+autolearn=/m.exec(
      chunk,
    );
    const messageId = /^Message-I[Dd]:\s+(<[^>\s]+>)/m.exec(chunk);
    if (status && messageId)
      scores.set(messageId[1], { score: Number(status[1]), tests: status[2].replace(/\s+/g, '') });
  }
  return scores;
}

/**
 * Scores the messages and a spam control in one spamassassin run; every message must stay below
 * MAX_SCORE and the control above it, so a broken scorer cannot pass.
 */
async function expectAllBelowMaxScore(messages: Scored[], what: string): Promise<void> {
  expect(new Set(messages.map((m) => m.language))).toEqual(new Set(['en', 'de', 'fr', 'es']));
  // A control the same pipeline must score high, so a broken scorer cannot pass the test.
  const controlId = messageIdFor(PEOPLE.en.sender.email, 'control.1');
  const control: Scored = {
    label: 'control',
    messageId: controlId,
    language: 'control',
    raw: await raw(
      PEOPLE.en,
      'thunderbird',
      controlId,
      {
        subject: 'FREE MONEY!!! Claim your PRIZE now',
        body: 'Dear friend,\n\nCLICK HERE to claim your FREE prize!!! 100% GUARANTEED. Cheap viagra, no prescription.\nAct now, limited time offer, risk free, cash bonus $$$.\n\nTo unsubscribe reply REMOVE.',
        html: '<p>Dear friend,</p>\n<p>CLICK HERE to claim your FREE prize!!! 100% GUARANTEED. Cheap viagra, no prescription.<br>Act now, limited time offer, risk free, cash bonus $$$.</p>\n<p>To unsubscribe reply REMOVE.</p>',
      },
      new Date('2026-03-12T14:20:00Z'),
    ),
  };
  messages.push(control);

  // A private HOME, no Bayes, no prefs file: nothing is learned or written into the user's
  // ~/.spamassassin (SpamAssassin 4 still makes that directory, empty, as its state dir).
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-sa-'));
  try {
    const run = spawnSync('spamassassin', ['-L', '-t', '-x', '--mbox', '--cf=use_bayes 0', '--cf=bayes_auto_learn 0'], {
      input: toMbox(messages),
      encoding: 'utf8',
      env: { ...process.env, HOME: home },
      maxBuffer: 256 * 1024 * 1024,
      timeout: 110_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const scores = parseScores(run.stdout);
    for (const m of messages) {
      const scored = scores.get(m.messageId);
      expect(scored, `no score for ${m.label}`).toBeDefined();
      m.score = scored?.score;
      m.tests = scored?.tests;
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }

  expect(control.score).toBeGreaterThanOrEqual(MAX_SCORE);
  messages.pop();

  const byLanguage = new Map<string, Scored>();
  for (const m of messages) {
    const worst = byLanguage.get(m.language);
    if (!worst || (m.score ?? 0) > (worst.score ?? 0)) byLanguage.set(m.language, m);
  }
  console.info(
    `SpamAssassin (local rules), ${what}, ${messages.length} messages: max score per language: ` +
      [...byLanguage.entries()].map(([language, m]) => `${language} ${m.score} (${m.tests})`).join('; '),
  );
  const tooHigh = messages
    .filter((m) => (m.score ?? Infinity) >= MAX_SCORE)
    .map((m) => `${m.label}: ${m.score} ${m.tests}`);
  expect(tooHigh).toEqual([]);
}

describe.skipIf(!available)('SpamAssassin score of the default templates and the generated conversations', () => {
  it(`every default initial, reply and follow-up message scores below ${MAX_SCORE}`, { timeout: 120_000 }, async () => {
    await expectAllBelowMaxScore(await renderAll(), 'default templates');
  });

  it(`every message of generated threads, all turns, scores below ${MAX_SCORE}`, { timeout: 120_000 }, async () => {
    await expectAllBelowMaxScore(await renderConversations(new Date('2026-03-12T14:20:00Z')), 'generated threads');
  });
});
