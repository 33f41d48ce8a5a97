import { describe, expect, it } from 'vitest';
import type { DefaultTemplate } from './default-templates.js';
import type { TemplateType } from './templates.schemas.js';
import { COMPANIES, DEFAULT_TEMPLATES, TOPICS, TOPICS_BY_LANGUAGE } from './default-templates.js';
import { SAMPLE_VALUES, analyzeText, renderMessage } from './render.js';

/** Word starts that make mail read like marketing, in the four languages shipped. */
const BANNED = [
  // English
  'free',
  'offer',
  'discount',
  'buy',
  'click',
  'deal',
  'guarantee',
  'limited',
  'unlimited',
  'urgent',
  'winner',
  'cash',
  'money',
  'prize',
  'promo',
  'sales?\\b',
  'cheap',
  'bonus',
  'act now',
  'order now',
  'subscribe',
  'unsubscribe',
  'newsletter',
  'exclusive',
  'special',
  'risk',
  // German
  'kostenlos',
  'gratis',
  'angebot',
  'sonderangebot',
  'rabatt',
  'kaufen',
  'dringend',
  'gewinn',
  'garantie',
  'garantiert',
  'klicken',
  // French
  'gratuit',
  'offre',
  'remise',
  'achet',
  'gagn',
  'garanti',
  'cliqu',
  'prix',
  // Spanish
  'oferta',
  'descuento',
  'compra',
  'urgente',
  'ganador',
  'garantía',
  'garantiz',
  'haga clic',
  'precio',
].map((stem) => new RegExp(`(?<![\\p{L}\\p{N}])${stem}`, 'iu'));

const LINK = /https?:|www\.|\.(?:com|org|net|io|de|fr|es)\b|@/i;
const ALL_CAPS = /(?<![\p{L}\p{N}])\p{Lu}{2,}(?![\p{L}\p{N}])/u;

function problemsIn(text: string): string[] {
  const banned = BANNED.filter((re) => re.test(text)).map((re) => `banned word ${re.source}`);
  const other = [
    LINK.test(text) && 'link or address',
    text.includes('$') && '"$"',
    text.includes('%') && '"%"',
    ALL_CAPS.test(text) && 'all caps',
  ].filter((p): p is string => typeof p === 'string');
  return [...banned, ...other];
}

const label = (t: DefaultTemplate) => `${t.language}/${t.type}/${t.name}`;
const count = (language: string, type: TemplateType) =>
  DEFAULT_TEMPLATES.filter((t) => t.language === language && t.type === type).length;

/** Sentence ends: . ? ! … followed by white space or the end. */
const sentences = (text: string) => (text.match(/[.?!…](?=\s|$)/g) ?? []).length;

function render(template: DefaultTemplate, seed: number, topic = SAMPLE_VALUES.topic) {
  return renderMessage(template, { ...SAMPLE_VALUES, topic }, seed);
}

describe('DEFAULT_TEMPLATES', () => {
  it('has enough templates per language and type', () => {
    expect(count('en', 'initial')).toBeGreaterThanOrEqual(14);
    expect(count('en', 'reply')).toBeGreaterThanOrEqual(12);
    expect(count('en', 'followup')).toBeGreaterThanOrEqual(4);
    for (const language of ['de', 'fr', 'es']) {
      expect(count(language, 'initial'), language).toBeGreaterThanOrEqual(4);
      expect(count(language, 'reply'), language).toBeGreaterThanOrEqual(3);
    }
    expect(new Set(DEFAULT_TEMPLATES.map((t) => t.language))).toEqual(new Set(['en', 'de', 'fr', 'es']));
  });

  it('has names unique per language and type', () => {
    const keys = DEFAULT_TEMPLATES.map((t) => `${t.language}/${t.type}/${t.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('keeps to the API limits', () => {
    for (const t of DEFAULT_TEMPLATES) {
      expect(t.name.length, label(t)).toBeGreaterThanOrEqual(1);
      expect(t.name.length, label(t)).toBeLessThanOrEqual(200);
      expect(t.subject.length, label(t)).toBeGreaterThanOrEqual(1);
      expect(t.subject.length, label(t)).toBeLessThanOrEqual(300);
      expect(t.body.length, label(t)).toBeGreaterThanOrEqual(1);
      expect(t.body.length, label(t)).toBeLessThanOrEqual(20_000);
      expect(t.language, label(t)).toMatch(/^[a-z]{2}$/);
      expect(['initial', 'reply', 'followup'], label(t)).toContain(t.type);
    }
  });

  it('has valid markup in every subject and body', () => {
    for (const t of DEFAULT_TEMPLATES) {
      expect(analyzeText(t.subject).problems, `${label(t)} subject`).toEqual([]);
      expect(analyzeText(t.body).problems, `${label(t)} body`).toEqual([]);
    }
  });

  it('contains no marketing words, links, "$", "%" or all-caps words', () => {
    for (const t of DEFAULT_TEMPLATES) {
      expect(problemsIn(`${t.name}\n${t.subject}\n${t.body}`), label(t)).toEqual([]);
    }
  });

  it('uses at most one exclamation mark', () => {
    for (const t of DEFAULT_TEMPLATES) {
      expect(`${t.subject}${t.body}`.split('!').length - 1, label(t)).toBeLessThanOrEqual(1);
    }
  });

  it('greets the recipient by name and signs off with the sender first name', () => {
    for (const t of DEFAULT_TEMPLATES) {
      expect(analyzeText(t.body).variables, label(t)).toContain('recipient_first_name');
      expect(t.body.split('\n').at(-1), label(t)).toBe('{sender_first_name}');
    }
  });

  it('varies: spintax in most templates, some use of every everyday variable', () => {
    const withSpintax = DEFAULT_TEMPLATES.filter(
      (t) => new Set([0, 1, 2, 3, 4, 5].map((seed) => render(t, seed).body)).size > 1,
    );
    expect(withSpintax.length).toBeGreaterThanOrEqual(DEFAULT_TEMPLATES.length * 0.9);
    const used = new Set(
      DEFAULT_TEMPLATES.flatMap((t) => [...analyzeText(t.subject).variables, ...analyzeText(t.body).variables]),
    );
    for (const name of [
      'recipient_first_name',
      'sender_first_name',
      'topic',
      'company',
      'day_of_week',
      'date',
    ] as const) {
      expect(used, name).toContain(name);
    }
  });

  it('renders to short mail: 2 to 8 sentences, varied in length, no markup left', () => {
    const counts = new Set<number>();
    for (const t of DEFAULT_TEMPLATES) {
      for (let seed = 0; seed < 8; seed += 1) {
        const message = render(t, seed);
        const n = sentences(message.body);
        expect(n, `${label(t)} seed ${seed}: ${message.body}`).toBeGreaterThanOrEqual(2);
        expect(n, `${label(t)} seed ${seed}: ${message.body}`).toBeLessThanOrEqual(8);
        expect(`${message.subject}${message.body}`, label(t)).not.toMatch(/[{}]/);
        counts.add(n);
      }
    }
    expect(counts.size).toBeGreaterThanOrEqual(3);
  });

  it('renders with every topic of its language', () => {
    for (const t of DEFAULT_TEMPLATES) {
      const usesTopic = analyzeText(`${t.subject}\n${t.body}`).variables.includes('topic');
      for (const topic of TOPICS_BY_LANGUAGE[t.language]) {
        const rendered = [0, 1, 2, 3].map((seed) => render(t, seed, topic)).map((m) => `${m.subject}\n${m.body}`);
        if (usesTopic) expect(rendered.join('\n'), label(t)).toContain(topic);
      }
    }
  });

  it('gives replies and follow-ups a "Re:" subject', () => {
    for (const t of DEFAULT_TEMPLATES.filter((x) => x.type !== 'initial')) {
      expect(t.subject, label(t)).toMatch(/^Re: /);
    }
  });
});

describe('TOPICS and COMPANIES', () => {
  it('has at least 30 English topics and a list for each template language', () => {
    expect(TOPICS.length).toBeGreaterThanOrEqual(30);
    expect(TOPICS_BY_LANGUAGE.en).toBe(TOPICS);
    for (const language of ['de', 'fr', 'es'])
      expect(TOPICS_BY_LANGUAGE[language]?.length, language).toBeGreaterThanOrEqual(15);
  });

  it('has about twenty companies', () => {
    expect(COMPANIES.length).toBeGreaterThanOrEqual(20);
  });

  it('has unique, clean, lower-case-led topics and clean company names', () => {
    const lists: [string, readonly string[]][] = [...Object.entries(TOPICS_BY_LANGUAGE), ['companies', COMPANIES]];
    for (const [name, list] of lists) {
      expect(new Set(list).size, name).toBe(list.length);
      for (const item of list) {
        expect(problemsIn(item), `${name}: ${item}`).toEqual([]);
        expect(item, `${name}: ${item}`).not.toMatch(/[{}|!?]/);
        expect(item.trim(), `${name}: ${item}`).toBe(item);
      }
    }
    for (const [language, topics] of Object.entries(TOPICS_BY_LANGUAGE)) {
      for (const topic of topics) expect(topic, `${language}: ${topic}`).toMatch(/^\p{Ll}/u);
    }
  });
});
