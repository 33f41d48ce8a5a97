import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const ALPHABET_CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/**
 * The last time prefix made: ids made together (a planning batch's millions a day) share their
 * instant, and the prefix and tail were built a character at a time for every id.
 */
let lastTime = -1;
let lastTimeText = '';
const tailCodes = new Array<number>(12);

/**
 * An opaque id such as `tpl_01jd5k7q2m8x4v6b3n9c`: a time prefix keeps ids in creation order
 * (so "newest first" has a stable tie-break) and 12 random characters keep them unguessable.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  if (now !== lastTime) {
    lastTimeText = encodeTime(now);
    lastTime = now;
  }
  const random = randomBytes(12);
  for (let i = 0; i < 12; i++) tailCodes[i] = ALPHABET_CODES[random[i] % 32];
  return `${prefix}_${lastTimeText}${String.fromCharCode(...tailCodes)}`;
}
