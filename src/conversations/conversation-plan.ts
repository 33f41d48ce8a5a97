/*
 * What a thread is about before any of it is written: the topic, what the opener asks and the
 * answer the reply gives. Both sides of a thread derive the same plan from the thread's id and the
 * opener's region and language, so the reply answers the question the first message asked and the
 * follow-up acknowledges that answer, without storing anything beyond the messages themselves.
 */
import { drawFrom, expandRule, type Rules } from './grammar.js';
import { bankFor, type ConversationLanguage } from './phrase-banks.js';

/** What the first message asks; each has its own question, answer and acknowledgement in every bank. */
export const INTENTS = ['meeting', 'review', 'choice', 'status', 'document', 'headcount'] as const;
export type Intent = (typeof INTENTS)[number];

/** The slot whose value the answer to each question must name: the proof that it answers. */
export const ANSWER_SLOT: Readonly<Record<Intent, string>> = {
  meeting: 'day',
  review: 'deadline',
  choice: 'opt',
  status: 'deadline',
  document: 'folder',
  headcount: 'count',
};

export interface ConversationPlan {
  language: ConversationLanguage;
  intent: Intent;
  /** The values every message of the thread shares: topic, the days offered, the day chosen… */
  slots: Record<string, string>;
  /** The text the answer must contain (the value of ANSWER_SLOT[intent]). */
  answer: string;
}

function expandDistinct(
  rule: string,
  rules: Rules,
  region: string,
  draw: () => number,
  slots: Record<string, string>,
  not: string,
): string {
  for (let attempt = 0; attempt < 8; attempt++) {
    const value = expandRule(rule, { rules, region, draw, slots });
    if (value !== not) return value;
  }
  return expandRule(rule, { rules, region, draw, slots });
}

/** The plan of the thread `threadId`, opened in `language` by a writer of `region`. */
export function planConversation(input: {
  threadId: string;
  region: string;
  language: ConversationLanguage;
}): ConversationPlan {
  const { rules, contractions } = bankFor(input.language);
  const draw = drawFrom(`${input.region}\n${input.threadId}\nplan`);
  const ctx = { rules, region: input.region, draw, slots: {} as Record<string, string> };
  const slots = ctx.slots;
  const [article, thing] = expandRule('artifact', ctx).split('~');
  // "l’" joins its noun without a space; an artifact with no article is its own short form
  const joined = article.endsWith('’') ? `${article.trim()}${thing.trim()}` : `${article.trim()} ${thing.trim()}`;
  slots.artifact = joined.trim();
  slots.article = article.trim();
  slots.noun = thing.trim();
  slots.Thing = thing.trim().charAt(0).toUpperCase() + thing.trim().slice(1);
  slots.project = expandRule('codename', ctx);
  // the thread's short name for its subject carries the project, as colleagues name things
  slots.thing = expandRule('thing', ctx);
  slots.topic = expandRule('topic', ctx);
  slots.dayA = expandRule('day', ctx);
  slots.dayB = expandDistinct('day', rules, input.region, draw, slots, slots.dayA);
  slots.day = draw() < 0.5 ? slots.dayA : slots.dayB;
  const [optA, optB] = expandRule('option_pair', ctx)
    .split('~')
    .map((part) => part.trim());
  slots.optA = optA;
  slots.optB = optB;
  slots.opt = draw() < 0.5 ? optA : optB;
  slots.folder = expandRule('folder', ctx);
  slots.count = expandRule('count', ctx);
  slots.deadline = expandRule('deadline', ctx);
  // words that run together do so in the plan too, so an answer names its value as written
  for (const [key, value] of Object.entries(slots)) {
    slots[key] = contractions.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), value);
  }
  const intent = INTENTS[Math.floor(draw() * INTENTS.length)];
  return { language: input.language, intent, slots, answer: slots[ANSWER_SLOT[intent]] };
}
