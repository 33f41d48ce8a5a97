// The one place that sends a webhook over the network. The endpoint's host is a tenant's choice,
// so it gets the mail hosts' treatment (mail/policy.ts): resolved once, the address checked
// against the operator's rules, and exactly that address connected to. Nothing of the answer is
// kept but its status; no redirect is followed (it could point anywhere).
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { resolveMailHost, tlsOptions, type MailPolicy } from '../mail/policy.js';

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface WebhookAnswer {
  statusCode: number | null;
  /** Why there was no 2xx, in words fit for the user's delivery log (never an internal address). */
  error: string | null;
}

/** Bytes of an answer read before the connection is dropped: receivers should answer with next to nothing. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** A lookup that answers only with an address the policy lets a tenant reach. */
function checkedLookup(policy: MailPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveMailHost(hostname, policy).then(
      ({ address }) => {
        const family = isIP(address);
        if (options.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

export async function postWebhook(
  post: WebhookPost,
  options: { policy: MailPolicy; timeoutMs: number; signal?: AbortSignal },
): Promise<WebhookAnswer> {
  const url = new URL(post.url);
  const client = url.protocol === 'https:' ? https : http;
  // Node calls `lookup` for host names only: an address written in the URL is checked here, against
  // the operator's rules as they are now (they may have changed since the endpoint was stored)
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0) {
    const refused = await resolveMailHost(literal, options.policy).then(
      () => false,
      () => true,
    );
    if (refused) return { statusCode: null, error: 'could not connect to the endpoint' };
  }
  return new Promise<WebhookAnswer>((resolve) => {
    let settled = false;
    const finish = (answer: WebhookAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(answer);
    };
    const request = client.request(url, {
      method: 'POST',
      headers: { ...post.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(post.body) },
      lookup: checkedLookup(options.policy),
      agent: false,
      ...(url.protocol === 'https:' ? tlsOptions(options.policy) : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const timer = setTimeout(
      () => finish({ statusCode: null, error: `no answer within ${Math.round(options.timeoutMs / 1000)} s` }),
      options.timeoutMs,
    );
    request.on('response', (response) => {
      const statusCode = response.statusCode ?? null;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) finish(answerFor(statusCode));
      });
      response.on('end', () => finish(answerFor(statusCode)));
      response.on('error', () => finish(answerFor(statusCode)));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      // A refused host reads like any unreachable one, so the log is no probe of the operator's network.
      const aborted = options.signal?.aborted === true;
      finish({ statusCode: null, error: aborted ? 'the service stopped during the attempt' : describeFailure(error) });
    });
    request.end(post.body);
  });
}

function answerFor(statusCode: number | null): WebhookAnswer {
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { statusCode, error: null };
  return { statusCode, error: `the endpoint answered ${statusCode ?? 'nothing'}` };
}

function describeFailure(error: NodeJS.ErrnoException): string {
  if (error.code === 'ETIMEDOUT' || error.code === 'ECONNRESET') return 'the connection broke off';
  if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') || error.code === 'DEPTH_ZERO_SELF_SIGNED_CERT')
    return "the endpoint's TLS certificate was not accepted";
  return 'could not connect to the endpoint';
}
