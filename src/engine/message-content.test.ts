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
  ownText,
  quoteHeader,
  quoteLines,
  replyMessageIdFor,
  replySubject,
  seedFrom,
  templateTypeFor,
  withQuote,
} from './message-content.js';

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
  });

  it("puts Message-IDs on the sender's domain; a reply's id is derived from its parent", () => {
    expect(messageIdFor('Erin@Echo.Test', 'abc')).toBe('<abc@echo.test>');
    const reply = replyMessageIdFor('frank@foxtrot.test', '<abc@echo.test>');
    expect(reply).toMatch(/^<[A-Za-z0-9_-]{24}@foxtrot\.test>$/);
    expect(replyMessageIdFor('frank@foxtrot.test', '<abc@echo.test>')).toBe(reply);
    expect(replyMessageIdFor('frank@foxtrot.test', '<abd@echo.test>')).not.toBe(reply);
  });
});

describe('quoting the parent', () => {
  const sentAt = new Date('2026-03-12T09:05:00Z');

  it('writes the header in the language of the reply', () => {
    expect(quoteHeader(sentAt, 'Erin Echo', 'en', 'UTC')).toBe('On Mar 12, 2026, 9:05 AM, Erin Echo wrote:');
    expect(quoteHeader(sentAt, 'Erin Echo', 'de', 'Europe/Berlin')).toBe('Am 12.03.2026, 10:05 schrieb Erin Echo:');
    expect(quoteHeader(sentAt, 'Erin', 'fr', 'UTC')).toMatch(/^Le 12 mars 2026.* 09:05, Erin a écrit :$/);
    expect(quoteHeader(sentAt, 'Erin', 'es', 'UTC')).toMatch(/^El 12 mar 2026, 9:05, Erin escribió:$/);
  });

  it("quotes only the parent's own words, a few lines at most", () => {
    const parent = 'Hi Frank,\n\nline one\nline two\n\nOn Mar 1, 2026, Frank wrote:\n> older text\n> more';
    expect(ownText(parent)).toBe('Hi Frank,\n\nline one\nline two');
    expect(quoteLines(parent)).toEqual(['> Hi Frank,', '>', '> line one', '> line two']);
    const long = Array.from({ length: 12 }, (_, i) => `line ${i}`).join('\n');
    const quoted = quoteLines(long);
    expect(quoted).toHaveLength(7);
    expect(quoted.at(-1)).toBe('> ...');
  });

  it('appends header and quote to the text and a blockquote to the HTML', () => {
    const reply = withQuote(
      { body: 'Sounds good.\n\nFrank', html: '<p>Sounds good.</p>\n<p>Frank</p>' },
      { body: 'Hi Frank,\n\nAre we still on for <Thursday>?', sentAt, author: 'Erin Echo' },
      'en',
      'UTC',
    );
    expect(reply.body).toBe(
      'Sounds good.\n\nFrank\n\nOn Mar 12, 2026, 9:05 AM, Erin Echo wrote:\n> Hi Frank,\n>\n> Are we still on for <Thursday>?\n',
    );
    expect(reply.html).toContain(
      '<blockquote><p>Hi Frank,</p>\n<p>Are we still on for &lt;Thursday&gt;?</p></blockquote>',
    );
    expect(reply.html.startsWith('<p>Sounds good.</p>')).toBe(true);
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
