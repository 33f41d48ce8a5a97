import { describe, expect, it } from 'vitest';
import { COMPANIES, TOPICS_BY_LANGUAGE } from '../templates/default-templates.js';
import { KNOWN_VARIABLES } from '../templates/render.js';
import {
  displayName,
  firstName,
  localizedDay,
  messageIdFor,
  messageVariables,
  nameFromAddress,
  replyMessageIdFor,
  replySubject,
  seedFrom,
  templateTypeFor,
  composeMessage,
} from './message-content.js';
import { CLIENT_PROFILE_NAMES, attributionLines } from './client-profile.js';

describe('names', () => {
  it('derives a display name from the address when the mailbox has none', () => {
    expect(nameFromAddress('erin@echo.test')).toBe('Erin');
    expect(nameFromAddress('john.smith@example.com')).toBe('John Smith');
    expect(nameFromAddress('mary_ann-lee+news@example.com')).toBe('Mary Ann Lee');
    expect(nameFromAddress('JSMITH42@example.com')).toBe('Jsmith');
    expect(nameFromAddress('1234@example.com')).toBe('1234');
  });

  it('prefers the mailbox name and takes the first word as first name', () => {
    expect(displayName({ email: 'x@y.test', name: '  Grace Hopper ' })).toBe('Grace Hopper');
    expect(displayName({ email: 'grace.h@y.test', name: null })).toBe('Grace H');
    expect(displayName({ email: 'grace@y.test', name: '   ' })).toBe('Grace');
    expect(firstName('Grace Brewster Hopper')).toBe('Grace');
  });
});

describe('seeds', () => {
  it('are stable safe integers that differ between texts', () => {
    const a = seedFrom('<a@x.test>');
    expect(seedFrom('<a@x.test>')).toBe(a);
    expect(Number.isSafeInteger(a) && a >= 0).toBe(true);
    expect(seedFrom('<b@x.test>')).not.toBe(a);
  });
});

describe('messageVariables', () => {
  const base = {
    sender: { email: 'erin@echo.test', name: 'Erin Echo' },
    recipient: { email: 'frank.foxtrot@foxtrot.test', name: null },
    language: 'en',
    timeZone: 'UTC',
    at: new Date('2026-03-12T10:00:00Z'),
    threadSeed: seedFrom('<thread@echo.test>'),
  };

  it('fills every known variable', () => {
    const values = messageVariables(base);
    expect(Object.keys(values).sort()).toEqual([...KNOWN_VARIABLES].sort());
    expect(values).toMatchObject({
      sender_name: 'Erin Echo',
      sender_first_name: 'Erin',
      sender_email: 'erin@echo.test',
      recipient_name: 'Frank Foxtrot',
      recipient_first_name: 'Frank',
      recipient_email: 'frank.foxtrot@foxtrot.test',
      day_of_week: 'Thursday',
      date: 'March 12',
    });
    expect(TOPICS_BY_LANGUAGE.en).toContain(values.topic);
    expect(COMPANIES).toContain(values.company);
  });

  it('keeps topic and company for the whole thread, and varies them between threads', () => {
    const one = messageVariables(base);
    expect(messageVariables({ ...base, at: new Date('2026-03-13T10:00:00Z') }).topic).toBe(one.topic);
    const topics = new Set<string>();
    for (let i = 0; i < 40; i += 1)
      topics.add(messageVariables({ ...base, threadSeed: seedFrom(`<t${i}@echo.test>`) }).topic);
    expect(topics.size).toBeGreaterThan(5);
  });

  it("writes day and date in the sender's language and time zone", () => {
    const at = new Date('2026-03-12T23:30:00Z'); // already Friday in Berlin
    expect(localizedDay(at, 'de', 'Europe/Berlin')).toEqual({ dayOfWeek: 'Freitag', date: '13. März' });
    expect(localizedDay(at, 'fr', 'Europe/Paris')).toEqual({ dayOfWeek: 'vendredi', date: '13 mars' });
    expect(localizedDay(at, 'es', 'UTC')).toEqual({ dayOfWeek: 'jueves', date: '12 de marzo' });
    const german = messageVariables({ ...base, language: 'de', timeZone: 'Europe/Berlin', at });
    expect(TOPICS_BY_LANGUAGE.de).toContain(german.topic);
  });

  it('falls back to English topics for a language without its own', () => {
    expect(TOPICS_BY_LANGUAGE.en).toContain(messageVariables({ ...base, language: 'nl' }).topic);
  });
});

describe('threading', () => {
  it('prefixes Re: once', () => {
    expect(replySubject('Quick question')).toBe('Re: Quick question');
    expect(replySubject('Re: Quick question')).toBe('Re: Quick question');
    expect(replySubject('RE: re:  AW: Quick question')).toBe('Re: Quick question');
    expect(replySubject('RE : Quick question')).toBe('Re: Quick question');
  });

  it("writes the replier's client's prefix: Outlook's upper-case RE:, AW: in German; Re: elsewhere", () => {
    expect(replySubject('Re: Quick question', 'outlook', 'en')).toBe('RE: Quick question');
    expect(replySubject('Re: Quick question', 'outlook', 'de')).toBe('AW: Quick question');
    expect(replySubject('AW: Quick question', 'outlook', 'fr')).toBe('RE: Quick question');
    expect(replySubject('AW: Quick question', 'outlook', 'es')).toBe('RE: Quick question');
    for (const profile of ['thunderbird', 'apple-mail', 'gmail-app'] as const) {
      for (const language of ['en', 'de', 'fr', 'es']) {
        expect(replySubject('RE: AW: Quick question', profile, language), `${profile} ${language}`).toBe(
          'Re: Quick question',
        );
      }
    }
  });

  it("puts Message-IDs on the sender's domain; a reply's id is derived from its parent, in the replier's client's form", () => {
    expect(messageIdFor('Erin@Echo.Test', 'abc')).toBe('<abc@echo.test>');
    const reply = replyMessageIdFor('frank@foxtrot.test', '<abc@echo.test>', 'thunderbird');
    expect(reply).toMatch(/^<[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}@foxtrot\.test>$/);
    expect(replyMessageIdFor('frank@foxtrot.test', '<abc@echo.test>', 'thunderbird')).toBe(reply);
    expect(replyMessageIdFor('frank@foxtrot.test', '<abd@echo.test>', 'thunderbird')).not.toBe(reply);
    // Outlook: a session counter, the send time as a FILETIME (2026: 01dc…), a random word
    expect(
      replyMessageIdFor('frank@foxtrot.test', '<abc@echo.test>', 'outlook', new Date('2026-03-12T09:05:00Z')),
    ).toMatch(/^<[0-9a-f]{4}01dc[0-9a-f]{4}\$[0-9a-f]{8}\$[0-9a-f]{8}\$@foxtrot\.test>$/);
  });
});

describe('quoting the parent', () => {
  const sentAt = new Date('2026-03-12T09:05:00Z');
  const input = {
    sentAt,
    author: { name: 'Erin Echo', email: 'erin@echo.test' },
    recipient: { name: 'Frank Fox', email: 'frank@foxtrot.test' },
    subject: 'Thursday',
  };

  it("writes each client's attribution in the language of the reply", () => {
    const en = { ...input, language: 'en', timeZone: 'UTC' };
    expect(attributionLines('thunderbird', en)).toEqual(['On 3/12/26 09:05, Erin Echo wrote:']);
    expect(attributionLines('apple-mail', en)).toEqual(['On Mar 12, 2026, 9:05 AM, Erin Echo <erin@echo.test> wrote:']);
    expect(attributionLines('gmail-app', en)).toEqual([
      'On Thu, Mar 12, 2026 at 9:05 AM Erin Echo <erin@echo.test> wrote:',
    ]);
    expect(attributionLines('outlook', en)).toEqual([
      'From: Erin Echo <erin@echo.test>',
      'Sent: Thursday, March 12, 2026 at 9:05 AM',
      'To: Frank Fox <frank@foxtrot.test>',
      'Subject: Thursday',
    ]);
    const de = { ...input, language: 'de', timeZone: 'Europe/Berlin' };
    expect(attributionLines('apple-mail', de)[0]).toMatch(
      /^Am 12\.03\.2026, 10:05 schrieb Erin Echo <erin@echo\.test>:$/,
    );
    expect(attributionLines('outlook', de)[0]).toBe('Von: Erin Echo <erin@echo.test>');
  });

  it('quotes the whole parent, its own quotes included, signed with the sender name, in every client', () => {
    const older = Array.from({ length: 12 }, (_, i) => `line ${i}`).join('\n');
    const parentBody = `Hi Frank,\n\nAre we still on for <Thursday>?\n\nOn Mar 1, 2026, Frank wrote:\n> ${older.replace(/\n/g, '\n> ')}`;
    for (const profile of CLIENT_PROFILE_NAMES) {
      const reply = composeMessage({
        template: { subject: 'ignored', body: 'Sounds good.' },
        kind: 'reply',
        sender: { email: 'frank@foxtrot.test', name: 'Frank Fox' },
        recipient: { email: 'erin@echo.test', name: 'Erin Echo' },
        profile,
        language: 'en',
        timeZone: 'UTC',
        at: new Date('2026-03-12T10:00:00Z'),
        messageId: '<r@foxtrot.test>',
        threadId: '<t@echo.test>',
        parent: { subject: 'Thursday', body: parentBody, html: null, sentAt, messageId: '<t@echo.test>' },
      });
      expect(reply.subject).toBe(profile === 'outlook' ? 'RE: Thursday' : 'Re: Thursday');
      expect(reply.body.startsWith('Sounds good.\n\n'), profile).toBe(true);
      expect(reply.body, profile).toContain('Frank Fox');
      expect(reply.body, profile).not.toContain('...');
      // the last line of the oldest quote is still there, one level deeper
      expect(reply.body, profile).toMatch(profile === 'outlook' ? /^> line 11$/m : /^>> line 11$/m);
      expect(reply.html, profile).toContain('Are we still on for &lt;Thursday&gt;?');
      expect(reply.html, profile).toContain('line 11');
      expect(reply.html, profile).not.toContain('<Thursday>');
    }
  });
});

describe('template of a message', () => {
  it('opens a thread with an initial, answers with a reply, and the third turn is a follow-up', () => {
    expect(templateTypeFor({ kind: 'initial', turn: 1 })).toBe('initial');
    expect(templateTypeFor({ kind: 'reply', turn: 2 })).toBe('reply');
    expect(templateTypeFor({ kind: 'reply', turn: 3 })).toBe('followup');
    expect(templateTypeFor({ kind: 'reply', turn: 4 })).toBe('reply');
  });
});
