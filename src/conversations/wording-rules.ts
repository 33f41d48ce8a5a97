/*
 * What any wording of a warmup message must satisfy before it is sent, whoever wrote it: the
 * built-in generator (its tests hold every message it writes to these rules) or an operator's chat
 * endpoint (whose answer is refused, and the built-in wording sent, on the first rule it breaks).
 * Each rule is a linear scan with bounded input: the text is cut off at MAX_CHECKED_CHARS first.
 */
import type { ConversationPlan } from './conversation-plan.js';
import type { ConversationLanguage } from './phrase-banks.js';

export const MIN_BODY_CHARS = 20;
export const MAX_BODY_CHARS = 1_500;
export const MAX_BODY_LINES = 24;
/** Longer text is refused before any other rule reads it. */
const MAX_CHECKED_CHARS = 4 * MAX_BODY_CHARS;

export type WordingProblem =
  | 'too short'
  | 'too long'
  | 'link'
  | 'marker word'
  | 'quoting artefact'
  | 'wrong language'
  | 'does not address the plan'
  | 'not signed';

const LINK =
  /(?:[a-z][a-z0-9+.-]*:\/\/|\bwww\.|\bmailto:|[^\s@]@[^\s@]+\.[a-z]|\b[a-z0-9-]+\.(?:com|net|org|io|ai|co|de|fr|es|uk|eu|info|biz|app|dev|ly|me|xyz)\b)/i;

// Words that give away a machine or the tool, and template or markup leftovers.
const MARKER =
  /\b(?:warm-?up|language model|as an ai|ai assistant|chatgpt|openai|ollama|llm|lorem ipsum|placeholder)\b|[[\]{}<>|*_`#\\]/i;

// What a mail program adds around the own words (quotes, attribution, header blocks), never the writer.
const QUOTING =
  /^\s*>|^\s*-{3,}|\b(?:wrote|schrieb|a écrit|escribió)\s*:|^\s*(?:subject|betreff|objet|asunto|from|von|de|to|an|à|para)\s?:/im;

/** Frequent short words of each language: enough of them tell a short message's language. */
const COMMON_WORDS: Record<ConversationLanguage, ReadonlySet<string>> = {
  en: new Set(
    'the a an and or to of for in on at is are be we you i it this that with can will would could let me my your our have has just not do know if by from next thanks'.split(
      ' ',
    ),
  ),
  de: new Set(
    'der die das den dem des und oder zu für im in am an ist sind wir du ich es mit kannst kann bitte mir mich dich dein deine unser uns noch nicht danke auf bis gerne schon wie'.split(
      ' ',
    ),
  ),
  fr: new Set(
    'le la les un une des et ou à de du pour dans au est sont nous vous je tu il ce cette avec peux peut merci moi mon ton votre notre pas ne que qui sur bien'.split(
      ' ',
    ),
  ),
  es: new Set(
    'el la los las un una y o a de del para en al es son nosotros tú yo con puedes puede gracias me mi tu su nuestro no que quien por sobre bien muy lo'.split(
      ' ',
    ),
  ),
};

/** How many of each language's frequent words the text uses, and how many words it has. */
export function languageHits(text: string): { hits: Record<ConversationLanguage, number>; words: number } {
  const words = text.toLowerCase().match(/[\p{L}]+/gu) ?? [];
  const hits = { en: 0, de: 0, fr: 0, es: 0 };
  for (const word of words) {
    for (const language of Object.keys(COMMON_WORDS) as ConversationLanguage[]) {
      if (COMMON_WORDS[language].has(word)) hits[language] += 1;
    }
  }
  return { hits, words: words.length };
}

/**
 * Whether the text reads as written in `language`: no other language's frequent words outnumber
 * its own (two at least, so one shared word such as "a" decides nothing), and a text of more than
 * a line uses some of its own. A one-line closing ("Sounds good, Maria.") may use none.
 */
export function isInLanguage(text: string, language: ConversationLanguage): boolean {
  const { hits, words } = languageHits(text);
  const own = hits[language];
  const other = Math.max(
    ...(Object.keys(hits) as ConversationLanguage[]).filter((l) => l !== language).map((l) => hits[l]),
  );
  if (other >= 2 && other >= own) return false;
  return own >= 2 || words <= 12;
}

export interface WordingContext {
  /** The thread's language: the text must be written in it. */
  language: ConversationLanguage;
  plan: ConversationPlan;
  /** 2 answers the plan's question, 3 acknowledges the answer: both must name it. */
  turn: number;
  /** The writer signs with it. */
  senderFirstName: string;
}

/** The first rule the text breaks, or null when it may be sent. */
export function wordingProblem(text: string, context: WordingContext): WordingProblem | null {
  if (text.length > MAX_CHECKED_CHARS) return 'too long';
  const body = text.trim();
  if (body.length < MIN_BODY_CHARS) return 'too short';
  if (body.length > MAX_BODY_CHARS || body.split('\n').length > MAX_BODY_LINES) return 'too long';
  if (LINK.test(body)) return 'link';
  if (QUOTING.test(body)) return 'quoting artefact';
  if (MARKER.test(body)) return 'marker word';
  if (!isInLanguage(body, context.language)) return 'wrong language';
  const folded = body.toLowerCase();
  if ((context.turn === 2 || context.turn === 3) && !folded.includes(context.plan.answer.toLowerCase())) {
    return 'does not address the plan';
  }
  if (!folded.includes(context.senderFirstName.toLowerCase())) return 'not signed';
  return null;
}
