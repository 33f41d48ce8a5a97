// Which mail program a mailbox writes with follows where its mail goes out: the Gmail app (and its
// `@mail.gmail.com` Message-IDs) only for a mailbox at Google, Outlook for most Microsoft mailboxes,
// and the choice stays put for a mailbox whatever else about it changes.
import { describe, expect, it } from 'vitest';
import {
  clientProfileOf,
  mailServiceOf,
  messageIdHost,
  replyPrefix,
  type ClientProfileName,
  type MailboxClientFacts,
} from './client-profile.js';

const smtp = (host: string) => JSON.stringify({ host, port: 587, secure: false, username: 'u' });

function shares(mailboxes: (id: string) => MailboxClientFacts): Map<ClientProfileName, number> {
  const counts = new Map<ClientProfileName, number>();
  for (let i = 0; i < 2000; i++) {
    const name = clientProfileOf(mailboxes(`mbx_${i}`)).name;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

describe('the mail program of a mailbox', () => {
  it('knows the mail service from the preset, the OAuth sign-in or the SMTP host', () => {
    expect(mailServiceOf({ id: 'a', provider: 'gmail' })).toBe('google');
    expect(mailServiceOf({ id: 'a', provider: 'custom', oauth_provider: 'google' })).toBe('google');
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: smtp('smtp.gmail.com') })).toBe('google');
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: smtp('smtp-relay.gmail.com.') })).toBe('google');
    expect(mailServiceOf({ id: 'a', provider: 'outlook' })).toBe('microsoft');
    expect(mailServiceOf({ id: 'a', provider: 'custom', oauth_provider: 'microsoft' })).toBe('microsoft');
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: smtp('smtp.office365.com') })).toBe('microsoft');
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: smtp('smtp-mail.outlook.com') })).toBe('microsoft');
    expect(mailServiceOf({ id: 'a', provider: 'icloud' })).toBe('apple');
    expect(mailServiceOf({ id: 'a', provider: 'yahoo' })).toBe('other');
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: smtp('mail.example.com') })).toBe('other');
    // a look-alike is not the service, and an unreadable row is no service at all
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: smtp('gmail.com.evil.test') })).toBe('other');
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: smtp('notgmail.com') })).toBe('other');
    expect(mailServiceOf({ id: 'a', provider: 'custom', smtp: '{not json' })).toBe('other');
  });

  it("never gives a mailbox outside Google the Gmail app or Google's Message-ID host", () => {
    for (const provider of ['outlook', 'icloud', 'yahoo', 'zoho', 'fastmail', 'custom']) {
      const counts = shares((id) => ({ id, provider, smtp: smtp('mail.example.com') }));
      expect(counts.get('gmail-app') ?? 0, provider).toBe(0);
      for (let i = 0; i < 200; i++) {
        const name = clientProfileOf({ id: `mbx_${i}`, provider }).name;
        expect(messageIdHost(name, 'ann@example.com')).toBe('example.com');
      }
    }
  });

  it('gives Google mailboxes the Gmail app most often, Microsoft ones Outlook, iCloud ones Apple Mail', () => {
    const google = shares((id) => ({ id, provider: 'gmail' }));
    const microsoft = shares((id) => ({ id, provider: 'custom', oauth_provider: 'microsoft' }));
    const apple = shares((id) => ({ id, provider: 'icloud' }));
    const other = shares((id) => ({ id, provider: 'custom' }));
    // the listed weights: 2 of 5, 3 of 5, 3 of 5, and a third each, within sampling noise of 2,000
    expect(google.get('gmail-app')! / 2000).toBeCloseTo(0.4, 1);
    expect(microsoft.get('outlook')! / 2000).toBeCloseTo(0.6, 1);
    expect(apple.get('apple-mail')! / 2000).toBeCloseTo(0.6, 1);
    for (const name of ['thunderbird', 'apple-mail', 'outlook'] as const) {
      expect(other.get(name)! / 2000, name).toBeCloseTo(1 / 3, 1);
    }
    // every desktop program still occurs at every service
    for (const counts of [google, microsoft, apple, other]) {
      for (const name of ['thunderbird', 'apple-mail', 'outlook'] as const) {
        expect(counts.get(name) ?? 0, name).toBeGreaterThan(100);
      }
    }
  });

  it('is stable for a mailbox: the same facts give the same program in every run', () => {
    for (let i = 0; i < 100; i++) {
      const facts = { id: `mbx_${i}`, provider: 'custom', oauth_provider: null, smtp: smtp('smtp.office365.com') };
      expect(clientProfileOf({ ...facts }).name).toBe(clientProfileOf(facts).name);
    }
  });
});

describe('the reply prefix', () => {
  it('is Outlook’s RE: (AW: in German) and Re: for the others', () => {
    expect(replyPrefix('outlook', 'en')).toBe('RE:');
    expect(replyPrefix('outlook', 'de')).toBe('AW:');
    expect(replyPrefix('outlook', 'fr')).toBe('RE:');
    expect(replyPrefix('outlook', 'es')).toBe('RE:');
    for (const profile of ['thunderbird', 'apple-mail', 'gmail-app'] as const) {
      for (const language of ['en', 'de', 'fr', 'es']) expect(replyPrefix(profile, language)).toBe('Re:');
    }
  });
});
