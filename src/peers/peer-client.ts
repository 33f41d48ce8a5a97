// The one place that calls another installation. Its URL is an operator's entry, but what it
// resolves to is not ours to trust: the address is checked against the mail policy right before
// connecting (as webhooks are), no redirect is followed, and the answer is bounded in size and time.
import { randomBytes, type KeyObject } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { resolveMailHost, tlsOptions, type MailPolicy } from '../mail/policy.js';
import { contentDigest, signMessage } from './http-signatures.js';

/** Bytes of a peer's answer read at most: an offer of 1,000 mailboxes is about 150 KiB. */
export const MAX_ANSWER_BYTES = 256 * 1024;
/** How long a signature we make stays valid (the callee also bounds `created` by its clock). */
export const SIGNATURE_LIFETIME_S = 60;

export interface PeerCall {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
}

export interface PeerAnswer {
  status: number;
  json: unknown;
}

export class PeerCallError extends Error {
  override readonly name = 'PeerCallError';
}

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

/** The signed request's headers: RFC 9421 over method, target URI and RFC 9530 digest. */
export function signedHeaders(
  call: { method: string; url: string; body: string },
  identity: { keyId: string; privateKey: KeyObject },
  nowMs: number,
): Record<string, string> {
  const created = Math.floor(nowMs / 1000);
  const headers: Record<string, string> = { 'content-digest': contentDigest(call.body) };
  const signature = signMessage(
    { method: call.method, targetUri: call.url, headers },
    {
      label: 'peer',
      components: ['@method', '@target-uri', 'content-digest'],
      params: [
        ['created', created],
        ['expires', created + SIGNATURE_LIFETIME_S],
        ['nonce', randomBytes(16).toString('base64url')],
        ['keyid', identity.keyId],
        ['alg', 'ed25519'],
      ],
    },
    identity.privateKey,
  );
  return { ...headers, ...signature };
}

export async function callPeer(
  call: PeerCall,
  options: {
    identity: { keyId: string; privateKey: KeyObject };
    policy: MailPolicy;
    timeoutMs: number;
    nowMs: number;
  },
): Promise<PeerAnswer> {
  const url = new URL(call.url);
  // Node calls `lookup` only for a name: an address in the URL is checked here, or never
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0) {
    try {
      await resolveMailHost(literal, options.policy);
    } catch {
      throw new PeerCallError('could not connect to the peer');
    }
  }
  const body = call.body === undefined ? '' : JSON.stringify(call.body);
  const headers: Record<string, string> = {
    ...signedHeaders({ method: call.method, url: url.href, body }, options.identity, options.nowMs),
    accept: 'application/json',
    ...(call.body === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PeerAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: { answer: PeerAnswer } | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if ('answer' in outcome) resolve(outcome.answer);
      else reject(new PeerCallError(outcome.error));
    };
    const request = client.request(url, {
      method: call.method,
      headers,
      lookup: checkedLookup(options.policy),
      agent: false,
      ...(url.protocol === 'https:' ? tlsOptions(options.policy) : {}),
    });
    const timer = setTimeout(
      () => finish({ error: `the peer did not answer within ${Math.round(options.timeoutMs / 1000)} s` }),
      options.timeoutMs,
    );
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) return finish({ error: 'the peer answered with more than this protocol carries' });
        chunks.push(chunk);
      });
      response.on('end', () => {
        let json: unknown = null;
        try {
          const text = Buffer.concat(chunks).toString('utf8');
          json = text === '' ? null : JSON.parse(text);
        } catch {
          return finish({ error: 'the peer answered with something other than JSON' });
        }
        finish({ answer: { status: response.statusCode ?? 0, json } });
      });
      response.on('error', () => finish({ error: 'the connection to the peer broke off' }));
    });
    // A refused address reads like any unreachable one, so an answer is no probe of the network.
    request.on('error', () => finish({ error: 'could not connect to the peer' }));
    request.end(body);
  });
}
