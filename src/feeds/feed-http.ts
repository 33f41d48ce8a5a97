// The one place the feeds reach a provider over the network. The base URLs are the operator's
// settings (tests point them at a stand-in on loopback), but the request still gets the mail
// hosts' treatment (mail/policy.ts): the host is resolved once, the address checked against the
// operator's rules (loopback and private networks only when allow-listed), and exactly that
// address connected to. No redirect is followed. The answer is bounded in size and in time, the
// whole of it (a server that trickles its body hits the deadline too).
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { resolveMailHost, tlsOptions, type MailPolicy } from '../mail/policy.js';

export interface FeedRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface FeedLimits {
  policy: MailPolicy;
  /** The whole exchange, body included. */
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

/** Why a feed could not be fetched, in words fit for the workspace's page (never an address or a secret). */
export class FeedFetchError extends Error {
  override readonly name = 'FeedFetchError';
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** A lookup that answers with the address already checked (Node skips lookups of IP literals, so the check comes first). */
function fixedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** The answer's body as text when the status is 2xx; anything else is a FeedFetchError. */
export async function fetchFeed(request: FeedRequest, limits: FeedLimits): Promise<string> {
  const url = new URL(request.url);
  const client = url.protocol === 'https:' ? https : http;
  const seconds = Math.max(1, Math.round(limits.timeoutMs / 1000));
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  // a refused host reads like any unreachable one, so the page is no probe of the operator's network
  const address = await resolveMailHost(hostname, limits.policy).then(
    (endpoint) => endpoint.address,
    () => {
      throw new FeedFetchError('could not connect to the provider');
    },
  );
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (error: FeedFetchError | null, text = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      if (error) reject(error);
      else resolve(text);
    };
    const body = request.body;
    const outgoing = client.request(url, {
      method: request.method ?? 'GET',
      headers: {
        ...request.headers,
        ...(body !== undefined
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
          : {}),
      },
      lookup: fixedLookup(address),
      agent: false,
      ...(url.protocol === 'https:' ? tlsOptions(limits.policy) : {}),
      ...(limits.signal ? { signal: limits.signal } : {}),
    });
    const timer = setTimeout(
      () => finish(new FeedFetchError(`no complete answer within ${seconds} s`)),
      limits.timeoutMs,
    );
    outgoing.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        finish(new FeedFetchError(`the provider answered ${status}`, status));
        return;
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        finish(new FeedFetchError(`the answer is larger than ${limits.maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > limits.maxBytes) finish(new FeedFetchError(`the answer is larger than ${limits.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => finish(null, Buffer.concat(chunks).toString('utf8')));
      response.on('error', () => finish(new FeedFetchError('the connection broke off')));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (limits.signal?.aborted) finish(new FeedFetchError('the service stopped during the fetch'));
      else if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT'))
        finish(new FeedFetchError("the provider's TLS certificate was not accepted"));
      else finish(new FeedFetchError('could not connect to the provider'));
    });
    outgoing.end(body);
  });
}
