import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  contentDigest,
  parseSignature,
  parseSignatureInput,
  privateKeyFromSeed,
  publicKeyFromText,
  rawPublicKey,
  signatureBase,
  signMessage,
  verifyMessage,
  type SignatureInput,
  type SignedMessage,
} from './http-signatures.js';

// RFC 9421 Appendix B.1.4 (test-key-ed25519, as a JWK) and B.2.6 (signing a request with it).
const RFC_SEED = 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU';
const RFC_PUBLIC = 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs';
const RFC_REQUEST: SignedMessage = {
  method: 'POST',
  targetUri: 'https://example.com/foo?param=Value&Pet=dog',
  headers: {
    date: 'Tue, 20 Apr 2021 02:07:55 GMT',
    'content-type': 'application/json',
    'content-length': '18',
  },
};
const RFC_INPUT: SignatureInput = {
  label: 'sig-b26',
  components: ['date', '@method', '@path', '@authority', 'content-type', 'content-length'],
  params: [
    ['created', 1618884473],
    ['keyid', 'test-key-ed25519'],
  ],
};
const RFC_SIGNATURE_INPUT =
  'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"';
const RFC_SIGNATURE =
  'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:';

describe("RFC 9421's own test vector B.2.6", () => {
  it('builds the signature base the RFC prints', () => {
    expect(signatureBase(RFC_REQUEST, RFC_INPUT)).toBe(
      [
        '"date": Tue, 20 Apr 2021 02:07:55 GMT',
        '"@method": POST',
        '"@path": /foo',
        '"@authority": example.com',
        '"content-type": application/json',
        '"content-length": 18',
        '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
      ].join('\n'),
    );
  });

  it("signs to exactly the RFC's headers with the RFC's key (Ed25519 is deterministic)", () => {
    const privateKey = privateKeyFromSeed(Buffer.from(RFC_SEED, 'base64url'));
    expect(rawPublicKey(privateKey).toString('base64url')).toBe(RFC_PUBLIC);
    expect(signMessage(RFC_REQUEST, RFC_INPUT, privateKey)).toEqual({
      'signature-input': RFC_SIGNATURE_INPUT,
      signature: RFC_SIGNATURE,
    });
  });

  it("parses the RFC's headers back and verifies them with the public key alone", () => {
    const input = parseSignatureInput(RFC_SIGNATURE_INPUT);
    expect(input).toEqual(RFC_INPUT);
    const signature = parseSignature(RFC_SIGNATURE, input.label);
    const publicKey = publicKeyFromText(RFC_PUBLIC)!;
    expect(verifyMessage(RFC_REQUEST, input, signature, publicKey)).toBe(true);
    const tampered = { ...RFC_REQUEST, targetUri: 'https://example.com/bar?param=Value&Pet=dog' };
    expect(verifyMessage(tampered, input, signature, publicKey)).toBe(false);
  });
});

describe('content digest (RFC 9530)', () => {
  it("matches the RFC's sha-256 example", () => {
    // RFC 9530 section 2: the body {"hello": "world"} with a trailing newline
    expect(contentDigest('{"hello": "world"}\n')).toBe('sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:');
  });
});

describe('the parser takes the canonical form only', () => {
  it.each([
    ['no label', '=("@method");created=1'],
    ['two signatures', 'a=("@method");created=1, b=("@method");created=1'],
    ['an unquoted component', 'sig1=(@method);created=1'],
    ['a component twice', 'sig1=("@method" "@method")'],
    ['a parameter twice', 'sig1=("@method");created=1;created=2'],
    ['a token value', 'sig1=("@method");alg=ed25519'],
    ['an escaped string', 'sig1=("@method");nonce="a\\"b"'],
    ['an unclosed list', 'sig1=("@method"'],
  ])('refuses %s', (_case, header) => {
    expect(() => parseSignatureInput(header)).toThrow(expect.objectContaining({ code: 'signature_malformed' }));
  });

  it('reads a header of the longest allowed length in linear time, and refuses a longer one at once', () => {
    const long = `sig1=(${'"a" '.repeat(250)}"b")`;
    expect(() => parseSignatureInput(long)).toThrow(expect.objectContaining({ code: 'signature_malformed' }));
    const started = performance.now();
    const quotes = `sig1=("${'"'.repeat(1015)}`;
    expect(() => parseSignatureInput(quotes)).toThrow(expect.objectContaining({ code: 'signature_malformed' }));
    const semicolons = `sig1=("@method")${';'.repeat(1000)}`;
    expect(() => parseSignatureInput(semicolons)).toThrow(expect.objectContaining({ code: 'signature_malformed' }));
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('refuses a signature that is not 64 bytes of standard base64', () => {
    expect(() => parseSignature('sig1=:AAAA:', 'sig1')).toThrow(
      expect.objectContaining({ code: 'signature_malformed' }),
    );
    expect(() => parseSignature(RFC_SIGNATURE, 'sig1')).toThrow(
      expect.objectContaining({ code: 'signature_malformed' }),
    );
  });

  it('knows a public key only as 43 base64url characters of a valid point', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const text = rawPublicKey(publicKey).toString('base64url');
    expect(publicKeyFromText(text)).toBeDefined();
    expect(publicKeyFromText(`${text}=`)).toBeUndefined();
    expect(publicKeyFromText('not a key')).toBeUndefined();
  });
});
