// RFC 9421 HTTP Message Signatures with Ed25519, as far as the peer protocol needs them: one
// signature per request, its signature base built from derived components (`@method`,
// `@target-uri`, `@path`, `@authority`) and header fields, and RFC 9530's Content-Digest (sha-256).
// The parser accepts only the canonical serialization this module writes (RFC 8941's subset:
// one dictionary member, an inner list of plain strings, integer and plain string parameters), in
// one left-to-right pass over a header capped in length, so no input costs more than linear time.
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** The longest Signature-Input or Signature header read; ours are under 300 characters. */
export const MAX_SIGNATURE_HEADER = 1024;

export class SignatureError extends Error {
  override readonly name = 'SignatureError';
  constructor(
    readonly code:
      | 'signature_required'
      | 'signature_malformed'
      | 'signature_expired'
      | 'signature_invalid'
      | 'unknown_key'
      | 'signature_replayed',
    message: string,
  ) {
    super(message);
  }
}

/** What a signature covers of one HTTP request. Header names in lower case. */
export interface SignedMessage {
  method: string;
  targetUri: string;
  headers: Record<string, string | undefined>;
}

export type SignatureParam = [name: string, value: number | string];

export interface SignatureInput {
  label: string;
  components: string[];
  params: SignatureParam[];
}

const LABEL = /^[a-z*][a-z0-9_.*-]{0,63}$/;
const COMPONENT = /^@?[a-z0-9_.-]{1,64}$/;
const PARAM_NAME = /^[a-z*][a-z0-9_.*-]{0,63}$/;
// The characters of an RFC 8941 string this parser takes: printable ASCII but `"` and `\`.
const PLAIN_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]{0,256}$/;

function serializeParams(params: SignatureParam[]): string {
  return params.map(([name, value]) => `;${name}=${typeof value === 'number' ? value : `"${value}"`}`).join('');
}

/** The inner list and its parameters, as they appear in Signature-Input and in `@signature-params`. */
export function serializeSignatureParams(input: Omit<SignatureInput, 'label'>): string {
  return `(${input.components.map((c) => `"${c}"`).join(' ')})${serializeParams(input.params)}`;
}

function componentValue(message: SignedMessage, component: string): string {
  const url = new URL(message.targetUri);
  switch (component) {
    case '@method':
      return message.method.toUpperCase();
    case '@target-uri':
      return message.targetUri;
    case '@path':
      return url.pathname;
    case '@authority':
      return url.host.toLowerCase();
    default: {
      if (component.startsWith('@'))
        throw new SignatureError('signature_malformed', `component ${component} is not supported`);
      const value = message.headers[component];
      if (value === undefined)
        throw new SignatureError('signature_malformed', `the signed header ${component} is missing`);
      return value.trim();
    }
  }
}

/** RFC 9421 section 2.5: one line per covered component, then `@signature-params`. */
export function signatureBase(message: SignedMessage, input: Omit<SignatureInput, 'label'>): string {
  const lines = input.components.map((component) => `"${component}": ${componentValue(message, component)}`);
  lines.push(`"@signature-params": ${serializeSignatureParams(input)}`);
  return lines.join('\n');
}

/** RFC 9530 Content-Digest of a body, sha-256. */
export function contentDigest(body: Buffer | string): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

// The PKCS #8 prefix of an Ed25519 private key (RFC 8410): the 32-byte seed follows it.
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** An Ed25519 private key from its 32-byte seed, as a JWK's `d` carries it. */
export function privateKeyFromSeed(seed: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The 32 raw bytes of an Ed25519 public key. */
export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' });
  return Buffer.from(jwk.x ?? '', 'base64url');
}

/** An Ed25519 public key from its 32 raw bytes (base64url); undefined when it is not one. */
export function publicKeyFromText(text: string): KeyObject | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return undefined;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: text }, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/** Signs `message`: the Signature-Input and Signature header values. */
export function signMessage(
  message: SignedMessage,
  input: SignatureInput,
  privateKey: KeyObject,
): { 'signature-input': string; signature: string } {
  const base = signatureBase(message, input);
  const signature = sign(null, Buffer.from(base, 'utf8'), privateKey).toString('base64');
  return {
    'signature-input': `${input.label}=${serializeSignatureParams(input)}`,
    signature: `${input.label}=:${signature}:`,
  };
}

function malformed(message: string): SignatureError {
  return new SignatureError('signature_malformed', message);
}

/** Parses a Signature-Input header written in the canonical form; anything else is malformed. */
export function parseSignatureInput(header: string): SignatureInput {
  if (header.length > MAX_SIGNATURE_HEADER) throw malformed('Signature-Input is too long');
  const equals = header.indexOf('=');
  const label = header.slice(0, equals);
  if (equals < 1 || !LABEL.test(label)) throw malformed('Signature-Input has no valid label');
  if (header[equals + 1] !== '(') throw malformed('Signature-Input must hold one inner list');
  const close = header.indexOf(')', equals + 2);
  if (close < 0) throw malformed('Signature-Input has an unclosed inner list');
  const list = header.slice(equals + 2, close);
  const components: string[] = [];
  if (list !== '') {
    for (const item of list.split(' ')) {
      const name = item.length >= 2 && item.startsWith('"') && item.endsWith('"') ? item.slice(1, -1) : '';
      if (!COMPONENT.test(name)) throw malformed(`Signature-Input names a component it cannot: ${item.slice(0, 40)}`);
      if (components.includes(name)) throw malformed(`component ${name} is covered twice`);
      components.push(name);
    }
  }
  const params: SignatureParam[] = [];
  const rest = header.slice(close + 1);
  if (rest !== '') {
    if (!rest.startsWith(';')) throw malformed('Signature-Input holds more than one signature');
    for (const part of rest.slice(1).split(';')) {
      const at = part.indexOf('=');
      const name = part.slice(0, at);
      const raw = part.slice(at + 1);
      if (at < 1 || !PARAM_NAME.test(name)) throw malformed('Signature-Input has a malformed parameter');
      if (params.some(([seen]) => seen === name)) throw malformed(`parameter ${name} is given twice`);
      if (/^\d{1,15}$/.test(raw)) params.push([name, Number(raw)]);
      else if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') && PLAIN_STRING.test(raw.slice(1, -1)))
        params.push([name, raw.slice(1, -1)]);
      else throw malformed(`parameter ${name} has a value this protocol does not use`);
    }
  }
  return { label, components, params };
}

/** Parses a Signature header of one member; the signature bytes. */
export function parseSignature(header: string, label: string): Buffer {
  if (header.length > MAX_SIGNATURE_HEADER) throw malformed('Signature is too long');
  const prefix = `${label}=:`;
  if (!header.startsWith(prefix) || !header.endsWith(':') || header.length <= prefix.length)
    throw malformed('Signature must hold one signature labelled as in Signature-Input');
  const value = header.slice(prefix.length, -1);
  if (!/^[A-Za-z0-9+/]{86}==$/.test(value)) throw malformed('Signature is not the base64 of an Ed25519 signature');
  return Buffer.from(value, 'base64');
}

/** True when `signature` is `publicKey`'s Ed25519 signature over the signature base. */
export function verifyMessage(
  message: SignedMessage,
  input: SignatureInput,
  signature: Buffer,
  publicKey: KeyObject,
): boolean {
  return verify(null, Buffer.from(signatureBase(message, input), 'utf8'), publicKey, signature);
}
