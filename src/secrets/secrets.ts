import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config.js';

/**
 * Secrets at rest (mailbox passwords, OAuth tokens, sign-in code verifiers, webhook signing
 * secrets, the peering identity's private key): AES-256-GCM, a random 12-byte nonce per record, stored as
 * `v1:<base64 nonce>:<base64 ciphertext>:<base64 tag>`. The version prefix lets a later format
 * (another key, another cipher) sit beside old records while they are re-encrypted.
 */

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';
export const SECRET_KEY_FILE = 'secret.key';

export class SecretDecryptionError extends Error {
  override readonly name = 'SecretDecryptionError';
}

/** 64 hex characters or the base64 (or base64url) of exactly 32 bytes; anything else is undefined. */
function parseKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === KEY_BYTES) return bytes;
  }
  return undefined;
}

/**
 * The key that encrypts every stored secret: `WARMUP_SECRET_KEY` when set, else `<dataDir>/secret.key`,
 * made on first start. Every process that shares a database must use the same key, so with
 * PostgreSQL and several machines set WARMUP_SECRET_KEY instead of relying on a local file.
 */
export function loadSecretKey({ secretKey, dataDir }: { secretKey: string | undefined; dataDir: string }): Buffer {
  if (secretKey !== undefined && secretKey !== '') {
    const key = parseKey(secretKey);
    if (!key) {
      throw new ConfigError(
        'WARMUP_SECRET_KEY must be 64 hex characters or the base64 of 32 bytes (make one with `openssl rand -hex 32`)',
      );
    }
    return key;
  }
  return readOrCreateKeyFile(path.join(dataDir, SECRET_KEY_FILE));
}

function readKeyFile(file: string): Buffer {
  const key = parseKey(fs.readFileSync(file, 'utf8'));
  if (!key) {
    throw new ConfigError(
      `${file} does not hold a 32-byte key (64 hex characters); restore it from a backup or set WARMUP_SECRET_KEY`,
    );
  }
  return key;
}

function readOrCreateKeyFile(file: string): Buffer {
  if (fs.existsSync(file)) return readKeyFile(file);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Written whole under a private name, then linked into place: link() fails if the name exists,
  // so of two processes starting together exactly one key wins, and nobody can read a half-written
  // file.
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temporary, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
    fs.chmodSync(temporary, 0o600); // exactly 0600 whatever the umask made of it
    try {
      fs.linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  return readKeyFile(file);
}

/**
 * Encrypts one secret. `context` (the id of the row that holds it) is authenticated with it, so a
 * ciphertext copied onto another row does not decrypt there.
 */
export function encryptSecret(key: Buffer, plaintext: string, context = ''): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, nonce.toString('base64'), ciphertext.toString('base64'), tag.toString('base64')].join(':');
}

export function decryptSecret(key: Buffer, stored: string, context = ''): string {
  const parts = stored.split(':');
  if (parts[0] !== VERSION || parts.length !== 4) {
    throw new SecretDecryptionError(`unknown secret format "${parts[0] ?? ''}"`);
  }
  const nonce = Buffer.from(parts[1], 'base64');
  const ciphertext = Buffer.from(parts[2], 'base64');
  const tag = Buffer.from(parts[3], 'base64');
  if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES)
    throw new SecretDecryptionError('the stored secret is damaged');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError(
      'the stored secret cannot be decrypted: the secret key (WARMUP_SECRET_KEY or secret.key in the data directory) is not the one it was encrypted with',
    );
  }
}
