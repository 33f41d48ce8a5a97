import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/**
 * An opaque id such as `tpl_01jd5k7q2m8x4v6b3n9c`: a time prefix keeps ids in creation order
 * (so "newest first" has a stable tie-break) and 12 random characters keep them unguessable.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  const random = randomBytes(12);
  let tail = '';
  for (const byte of random) tail += ALPHABET[byte % 32];
  return `${prefix}_${encodeTime(now)}${tail}`;
}
