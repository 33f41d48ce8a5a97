/*
 * The optional wording from an operator's OpenAI-compatible chat endpoint (a local Ollama's
 * `/v1/chat/completions`, say). The built-in generator always writes the message first; the
 * endpoint is asked to word the same plan (the topic, the question, the answer the reply must
 * name) afresh, and its text is used only when it passes the rules built-in text passes
 * (wording-rules.ts). A slow, large, malformed or refused answer, or text that breaks a rule, is
 * dropped and the built-in wording sent: the call is bounded in time and bytes and never blocks a
 * send for longer than its timeout.
 *
 * The endpoint is the operator's, set in the environment, not a tenant's: it may sit on a private
 * network, so it is not sent through the tenant-facing host policy. Its key is sent only in the
 * Authorization header and never appears in a log line, an error or a count.
 */
import http from 'node:http';
import https from 'node:https';
import type { ConversationPlan } from './conversation-plan.js';
import type { ConversationLanguage } from './phrase-banks.js';
import { wordingProblem, MAX_BODY_CHARS, type WordingProblem } from './wording-rules.js';

export interface ChatWordingSettings {
  /** The chat completions URL (`http://127.0.0.1:11434/v1/chat/completions`). */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; a secret. */
  apiKey?: string | undefined;
  /** The whole call, connection to last byte. */
  timeoutMs: number;
}

/** Bytes of an answer read before the call is given up: a few hundred tokens of JSON need far less. */
export const MAX_ANSWER_BYTES = 32 * 1024;
/** Tokens the endpoint is asked for at most: a warmup message is a few short paragraphs. */
export const MAX_TOKENS = 400;

export type ChatFailure = 'timeout' | 'too large' | 'http error' | 'malformed' | 'unreachable';

/** What became of one request for wording. */
export type WordingOutcome = { used: true; body: string } | { used: false; reason: ChatFailure | WordingProblem };

export interface WordingRequest {
  language: ConversationLanguage;
  plan: ConversationPlan;
  turn: number;
  senderFirstName: string;
  recipientFirstName: string;
  /** The built-in wording of the same message: the endpoint rewrites it, keeping what it says. */
  draft: string;
}

const LANGUAGE_NAMES: Record<ConversationLanguage, string> = {
  en: 'English',
  de: 'German',
  fr: 'French',
  es: 'Spanish',
};

const QUESTIONS: Record<ConversationPlan['intent'], string> = {
  meeting: 'when to meet (one of two days offered)',
  review: 'whether the other can review something by a deadline',
  choice: 'which of two options to take',
  status: 'where something stands and by when it is done',
  document: 'where a file is',
  headcount: 'how many people will come',
};

/** The role of each turn, and what it must say. */
function taskOf(request: WordingRequest): string {
  const { plan, turn } = request;
  const question = QUESTIONS[plan.intent];
  if (turn <= 1) return `Start the conversation and ask ${question}.`;
  if (turn === 2)
    return `Answer the question the colleague asked (${question}); the answer is "${plan.answer}" and must appear word for word.`;
  if (turn === 3) return `Thank them for the answer "${plan.answer}" (word for word) and say what happens next.`;
  return 'Close the exchange in one short line.';
}

/** The messages sent to the endpoint: the plan and the draft, never anything about the mailboxes but first names. */
export function chatMessages(request: WordingRequest): Array<{ role: 'system' | 'user'; content: string }> {
  const language = LANGUAGE_NAMES[request.language];
  const topic = request.plan.slots.topic ?? request.plan.slots.artifact ?? '';
  return [
    {
      role: 'system',
      content:
        `You write short, plain emails between two colleagues, in ${language} only. ` +
        'Write only the body: a greeting, one or two short paragraphs, a sign-off with the first name given. ' +
        'No subject line, no quoted earlier messages, no links, web or email addresses, no markdown, no placeholders.',
    },
    {
      role: 'user',
      content:
        `From ${request.senderFirstName} to ${request.recipientFirstName}. Topic: ${topic}. ` +
        `${taskOf(request)}\nRewrite this draft in your own words, keeping what it says:\n\n${request.draft}`,
    },
  ];
}

interface Answer {
  status: number;
  text: string;
}

/** One bounded POST: resolves with the answer or the reason there is none; never rejects. */
function post(settings: ChatWordingSettings, body: string): Promise<Answer | ChatFailure> {
  const url = new URL(settings.url);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Answer | ChatFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      accept: 'application/json',
    };
    if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
    const request = client.request(url, { method: 'POST', headers, agent: false });
    const timer = setTimeout(() => finish('timeout'), settings.timeoutMs);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) return finish('too large');
        chunks.push(chunk);
      });
      response.on('end', () =>
        finish({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', () => finish('unreachable'));
    });
    request.on('error', () => finish('unreachable'));
    request.end(body);
  });
}

/** The text of the first choice of a chat completions answer, or undefined when it has none. */
export function completionText(json: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  const content = (parsed as { choices?: Array<{ message?: { content?: unknown } }> } | null)?.choices?.[0]?.message
    ?.content;
  return typeof content === 'string' ? content : undefined;
}

/** Asks the endpoint once; the answer is used only if it passes every wording rule. */
export async function chatWording(settings: ChatWordingSettings, request: WordingRequest): Promise<WordingOutcome> {
  const answer = await post(
    settings,
    JSON.stringify({
      model: settings.model,
      messages: chatMessages(request),
      max_tokens: MAX_TOKENS,
      temperature: 0.9,
      stream: false,
    }),
  );
  if (typeof answer === 'string') return { used: false, reason: answer };
  if (answer.status < 200 || answer.status >= 300) return { used: false, reason: 'http error' };
  const text = completionText(answer.text);
  if (text === undefined) return { used: false, reason: 'malformed' };
  const body = text.replace(/\r\n?/g, '\n').trim();
  const problem = wordingProblem(body.slice(0, MAX_BODY_CHARS * 4), {
    language: request.language,
    plan: request.plan,
    turn: request.turn,
    senderFirstName: request.senderFirstName,
  });
  return problem ? { used: false, reason: problem } : { used: true, body };
}

/** A wording source for the engine, with a count of what became of its requests since the process started. */
export interface ChatWording {
  word(request: WordingRequest): Promise<WordingOutcome>;
  /** Requests by outcome: `used`, or the reason the built-in wording was sent instead. */
  counts(): Readonly<Record<string, number>>;
}

export function createChatWording(
  settings: ChatWordingSettings,
  onFallback: (reason: ChatFailure | WordingProblem) => void = () => undefined,
): ChatWording {
  const counts: Record<string, number> = {};
  return {
    async word(request) {
      const outcome = await chatWording(settings, request);
      const key = outcome.used ? 'used' : outcome.reason;
      counts[key] = (counts[key] ?? 0) + 1;
      if (!outcome.used) onFallback(outcome.reason);
      return outcome;
    },
    counts: () => ({ ...counts }),
  };
}

/**
 * Whether the endpoint answers a chat completion at all (for `warmup doctor`): null when it does,
 * else the reason, in the same words the engine counts.
 */
export async function probeChatEndpoint(settings: ChatWordingSettings): Promise<ChatFailure | null> {
  const answer = await post(
    settings,
    JSON.stringify({
      model: settings.model,
      messages: [{ role: 'user', content: 'Reply with one short friendly sentence.' }],
      max_tokens: 20,
      stream: false,
    }),
  );
  if (typeof answer === 'string') return answer;
  if (answer.status < 200 || answer.status >= 300) return 'http error';
  return completionText(answer.text) === undefined ? 'malformed' : null;
}
