import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new API key: 32 random bytes, shown to the user once. */
export function generateApiKey(): string {
  return `wk_${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

// Enough to tell keys apart in a list, far too little to help guess the rest (5 random characters of a `wk_` key).
const PREFIX_LENGTH = 8;

/** The part of a key that the key list shows. */
export function keyPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}
