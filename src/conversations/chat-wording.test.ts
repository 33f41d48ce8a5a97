// The optional chat endpoint against a stand-in: a loopback HTTP server in this test that speaks
// the OpenAI chat completions format and answers as each case needs. Good text is used; anything
// slow, large, malformed, refused, or breaking a wording rule falls back to the built-in wording.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { writeMessage, writingRegion } from './conversation-writer.js';
import { createChatWording, MAX_ANSWER_BYTES, probeChatEndpoint, type WordingRequest } from './chat-wording.js';

const API_KEY = 'sk-stand-in-0123456789abcdef';
const TIMEOUT_MS = 600;

interface Received {
  authorization: string | undefined;
  body: { model: string; max_tokens: number; messages: Array<{ role: string; content: string }> };
}

/** How the stand-in answers the next request. */
let answer: (response: http.ServerResponse) => void = () => undefined;
const received: Received[] = [];
let server: http.Server;
let url: string;

const completion = (content: string) =>
  JSON.stringify({ id: 'x', choices: [{ index: 0, message: { role: 'assistant', content } }] });

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        authorization: request.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body'],
      });
      answer(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received.length = 0;
});

// A real thread's reply: the plan says what it must answer.
const region = writingRegion('stand-in installation', 'workspace', 'mailbox');
const reply = writeMessage({
  threadId: '<stand-in-thread@example.test>',
  turn: 2,
  language: 'en',
  openerRegion: region,
  writerRegion: region,
  senderFirstName: 'Jonas',
  recipientFirstName: 'Maria',
});
const request: WordingRequest = {
  language: 'en',
  plan: reply.plan,
  turn: 2,
  senderFirstName: 'Jonas',
  recipientFirstName: 'Maria',
  draft: reply.body,
};
const GOOD = `Hi Maria,\n\nThanks for asking about it. My answer is ${reply.plan.answer}, and I will let you know if that changes for the team.\n\nBest,\nJonas`;

function wording() {
  const fallbacks: string[] = [];
  const chat = createChatWording({ url, model: 'stand-in-model', apiKey: API_KEY, timeoutMs: TIMEOUT_MS }, (reason) =>
    fallbacks.push(reason),
  );
  return { chat, fallbacks };
}

describe('wording from an OpenAI-compatible chat endpoint', () => {
  it('uses good text, and asks with the model, the key, a token bound and the plan in the prompt', async () => {
    answer = (response) => response.writeHead(200, { 'content-type': 'application/json' }).end(completion(GOOD));
    const { chat, fallbacks } = wording();
    expect(await chat.word(request)).toEqual({ used: true, body: GOOD });
    expect(fallbacks).toEqual([]);
    expect(chat.counts()).toEqual({ used: 1 });
    const [sent] = received;
    expect(sent.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body.model).toBe('stand-in-model');
    expect(sent.body.max_tokens).toBeGreaterThan(0);
    expect(sent.body.max_tokens).toBeLessThanOrEqual(400);
    const prompt = sent.body.messages.map((m) => m.content).join('\n');
    // the answer the reply must name, the language, and the draft it rewrites
    expect(prompt).toContain(`"${reply.plan.answer}"`);
    expect(prompt).toContain('English');
    expect(prompt).toContain(reply.body);
    // the key is sent only as the header, never inside the prompt
    expect(prompt).not.toContain(API_KEY);
  });

  const fallbackCases: Array<[string, string, (response: http.ServerResponse) => void]> = [
    [
      'slow output, beyond the time bound',
      'timeout',
      (response) => {
        setTimeout(() => {
          if (!response.destroyed) response.writeHead(200).end(completion(GOOD));
        }, TIMEOUT_MS * 3);
      },
    ],
    [
      'oversized output',
      'too large',
      (response) => response.writeHead(200).end(completion(`${GOOD} ${'more words '.repeat(MAX_ANSWER_BYTES / 8)}`)),
    ],
    [
      'output in the wrong language',
      'wrong language',
      (response) =>
        response
          .writeHead(200)
          .end(
            completion(
              `Hallo Maria,\n\nDanke für die Frage. Die Antwort ist ${reply.plan.answer}, und ich sage dir gerne Bescheid, wenn sich das für uns noch ändert.\n\nViele Grüße\nJonas`,
            ),
          ),
    ],
    [
      'output with a link',
      'link',
      (response) =>
        response.writeHead(200).end(completion(GOOD.replace('Best,', 'Details: https://example.com/x\n\nBest,'))),
    ],
    [
      'output naming a machine',
      'marker word',
      (response) => response.writeHead(200).end(completion(GOOD.replace('Thanks', 'As an AI, thanks'))),
    ],
    [
      'output with a quote of the earlier mail',
      'quoting artefact',
      (response) => response.writeHead(200).end(completion(`${GOOD}\n\nOn Monday, Maria wrote:\n> Could you`)),
    ],
    [
      'output that does not answer the question',
      'does not address the plan',
      (response) => response.writeHead(200).end(completion(GOOD.replace(reply.plan.answer, 'something else'))),
    ],
    ['malformed JSON', 'malformed', (response) => response.writeHead(200).end('{"choices": [{"message": ')],
    ['JSON without a message', 'malformed', (response) => response.writeHead(200).end('{"choices": []}')],
    ['an HTTP error', 'http error', (response) => response.writeHead(500).end(completion(GOOD))],
    ['a refused key', 'http error', (response) => response.writeHead(401).end('{"error": "bad key"}')],
    ['a dropped connection', 'unreachable', (response) => response.socket?.destroy()],
  ];

  for (const [name, reason, respond] of fallbackCases) {
    it(`falls back on ${name}, counting it without the key`, async () => {
      answer = respond;
      const { chat, fallbacks } = wording();
      const started = Date.now();
      const outcome = await chat.word(request);
      expect(outcome).toEqual({ used: false, reason });
      // never longer than the time bound, whatever the endpoint does
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 400);
      expect(fallbacks).toEqual([reason]);
      expect(chat.counts()).toEqual({ [reason]: 1 });
      expect(JSON.stringify({ outcome, fallbacks, counts: chat.counts() })).not.toContain(API_KEY);
    });
  }

  it('falls back when nothing listens at the URL', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const chat = createChatWording({ url: `http://127.0.0.1:${port}/v1/chat/completions`, model: 'm', timeoutMs: 500 });
    expect(await chat.word(request)).toEqual({ used: false, reason: 'unreachable' });
  });

  it('is probed for the doctor: an answer is fine, an error is named by its reason', async () => {
    const settings = { url, model: 'stand-in-model', apiKey: API_KEY, timeoutMs: TIMEOUT_MS };
    answer = (response) => response.writeHead(200).end(completion('Hello there.'));
    expect(await probeChatEndpoint(settings)).toBeNull();
    answer = (response) => response.writeHead(404).end('{}');
    expect(await probeChatEndpoint(settings)).toBe('http error');
    answer = (response) => response.writeHead(200).end('not json');
    expect(await probeChatEndpoint(settings)).toBe('malformed');
  });
});
