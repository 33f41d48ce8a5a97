// A request to an installation's /peer/v1 door signed the way a peer signs it (RFC 9421), with a
// knob for each way an attacker would bend it: another key, another path or body than the one
// signed, missing components or parameters, a clock off.
import { randomBytes, type KeyObject } from 'node:crypto';
import { contentDigest, signMessage, type SignatureParam } from '../../src/peers/http-signatures.js';

export interface SignOptions {
  method?: 'GET' | 'POST';
  path: string;
  body?: string;
  /** The path the signature names, when it differs from the one sent to. */
  signedPath?: string;
  /** The body the digest and signature cover, when it differs from the one sent. */
  signedBody?: string;
  privateKey?: KeyObject;
  keyId?: string;
  components?: string[];
  params?: (created: number) => SignatureParam[];
  createdOffsetS?: number;
  /** Seconds since the epoch the signature is made at (default: the machine's clock). */
  nowS?: number;
}

/** app.inject options of a signed request to `origin`, by the holder of `key` (keyid `keyId`). */
export function signedPeerRequest(origin: string, key: { privateKey: KeyObject; keyId: string }, options: SignOptions) {
  const method = options.method ?? 'POST';
  const signedBody = options.signedBody ?? options.body ?? '';
  const created = (options.nowS ?? Math.floor(Date.now() / 1000)) + (options.createdOffsetS ?? 0);
  const headers: Record<string, string> = { 'content-digest': contentDigest(signedBody) };
  const signature = signMessage(
    { method, targetUri: `${origin}${options.signedPath ?? options.path}`, headers },
    {
      label: 'peer',
      components: options.components ?? ['@method', '@target-uri', 'content-digest'],
      params: options.params?.(created) ?? [
        ['created', created],
        ['expires', created + 60],
        ['nonce', randomBytes(16).toString('base64url')],
        ['keyid', options.keyId ?? key.keyId],
        ['alg', 'ed25519'],
      ],
    },
    options.privateKey ?? key.privateKey,
  );
  const sent: Record<string, string> = {
    ...headers,
    ...signature,
    ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
  };
  return { method, url: options.path, headers: sent, ...(options.body === undefined ? {} : { payload: options.body }) };
}
