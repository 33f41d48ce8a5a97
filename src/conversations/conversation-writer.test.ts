// The writer's contract beyond the month's figures: the same seed writes the same words, another
// seed or another installation other ones, in the language asked for.
import { describe, expect, it } from 'vitest';
import { installationSeedFrom, writeMessage, writeOpeningMessage, writingRegion } from './conversation-writer.js';
import { wordingProblem } from './wording-rules.js';
import { conversationLanguage } from './phrase-banks.js';

const people = { senderFirstName: 'Greta', recipientFirstName: 'Paul' };

describe('writeOpeningMessage', () => {
  it('writes a fresh subject and body per seed, the same again for the same seed', () => {
    const region = writingRegion('installation', 'workspace', 'mailbox');
    const first = writeOpeningMessage({ language: 'de', seed: 'check-1', region, ...people });
    expect(writeOpeningMessage({ language: 'de', seed: 'check-1', region, ...people })).toEqual(first);
    const others = Array.from({ length: 20 }, (_, n) =>
      writeOpeningMessage({ language: 'de', seed: `check-${n + 2}`, region, ...people }),
    );
    expect(new Set(others.map((o) => o.body)).size).toBe(20);
    expect(first.body).toMatch(/Paul/);
    expect(first.body).toMatch(/Greta$/);
    expect(first.body).toMatch(/\?/);
    expect(`${first.subject}\n${first.body}`).not.toMatch(/[{}[\]<>]|warm-?up|https?:/i);
  });

  it('writes English for a language it has no phrases for', () => {
    expect(conversationLanguage('nl')).toBe('en');
    expect(conversationLanguage('de-AT')).toBe('de');
  });
});

describe('regions', () => {
  it('two installations word the same thread differently, and the seed does not show the key', () => {
    const key = Buffer.alloc(32, 7);
    const seed = installationSeedFrom(key);
    expect(seed).not.toContain(key.toString('hex'));
    expect(installationSeedFrom(key)).toBe(seed);
    const write = (installation: string) => {
      const region = writingRegion(installation, 'workspace', 'mailbox');
      return writeMessage({
        threadId: '<t1@x.test>',
        turn: 1,
        language: 'en',
        openerRegion: region,
        writerRegion: region,
        ...people,
      });
    };
    expect(write(seed).body).not.toBe(write(installationSeedFrom(Buffer.alloc(32, 8))).body);
  });

  it("the answer keeps the thread's plan and language whoever writes it", () => {
    const opener = writingRegion('installation', 'workspace-a', 'pia');
    const replier = writingRegion('installation', 'workspace-b', 'rex');
    const opening = writeMessage({
      threadId: '<t2@x.test>',
      turn: 1,
      language: 'fr',
      openerRegion: opener,
      writerRegion: opener,
      ...people,
    });
    const answer = writeMessage({
      threadId: '<t2@x.test>',
      turn: 2,
      language: 'fr',
      openerRegion: opener,
      writerRegion: replier,
      ...people,
    });
    expect(answer.plan).toEqual(opening.plan);
    expect(answer.answers).toBe(opening.plan.intent);
    expect(answer.body.toLowerCase()).toContain(opening.plan.answer.toLowerCase());
  });
});

describe('the wording rules', () => {
  it('every message the built-in generator writes passes the rules an endpoint’s wording must pass', () => {
    const failures: string[] = [];
    for (const language of ['en', 'de', 'fr', 'es'] as const) {
      for (let thread = 0; thread < 100; thread++) {
        const opener = writingRegion('installation', `workspace-${thread % 7}`, `opener-${thread}`);
        const replier = writingRegion('installation', `workspace-${thread % 5}`, `replier-${thread}`);
        for (const turn of [1, 2, 3, 4]) {
          const writer = turn % 2 === 1 ? opener : replier;
          const senderFirstName = turn % 2 === 1 ? 'Maria' : 'Jonas';
          const written = writeMessage({
            threadId: `<t${thread}@x.test>`,
            turn,
            language,
            openerRegion: opener,
            writerRegion: writer,
            senderFirstName,
            recipientFirstName: turn % 2 === 1 ? 'Jonas' : 'Maria',
          });
          const problem = wordingProblem(written.body, { language, plan: written.plan, turn, senderFirstName });
          if (problem) failures.push(`${language} turn ${turn}: ${problem}\n${written.body}`);
        }
      }
    }
    expect(failures.length, failures.slice(0, 3).join('\n\n')).toBe(0);
  });
});
