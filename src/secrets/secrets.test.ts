import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../clock.js';
import { ConfigError } from '../config.js';
import { createServices } from '../services.js';
import { decryptSecret, encryptSecret, loadSecretKey, SECRET_KEY_FILE, SecretDecryptionError } from './secrets.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-key-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('loadSecretKey', () => {
  const bytes = randomBytes(32);

  it.each([
    ['64 hex characters', bytes.toString('hex')],
    ['64 upper-case hex characters', bytes.toString('hex').toUpperCase()],
    ['base64 of 32 bytes', bytes.toString('base64')],
    ['base64url of 32 bytes', bytes.toString('base64url')],
    ['with surrounding whitespace', `  ${bytes.toString('hex')}\n`],
  ])('takes WARMUP_SECRET_KEY as %s', (_case, secretKey) => {
    const dataDir = tempDir();
    expect(loadSecretKey({ secretKey, dataDir }).equals(bytes)).toBe(true);
    expect(fs.existsSync(path.join(dataDir, SECRET_KEY_FILE))).toBe(false);
  });

  it.each([
    ['a passphrase', 'correct horse battery staple'],
    ['63 hex characters', bytes.toString('hex').slice(1)],
    ['66 hex characters', `${bytes.toString('hex')}ab`],
    ['base64 of 31 bytes', randomBytes(31).toString('base64')],
    ['base64 of 48 bytes', randomBytes(48).toString('base64')],
  ])('refuses WARMUP_SECRET_KEY as %s with a clear startup error that does not echo it', (_case, secretKey) => {
    let error: unknown;
    try {
      loadSecretKey({ secretKey, dataDir: tempDir() });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/WARMUP_SECRET_KEY must be 64 hex characters or the base64 of 32 bytes/);
    expect((error as Error).message).not.toContain(secretKey);
  });

  it('a bad WARMUP_SECRET_KEY stops the services from being built', () => {
    expect(() =>
      createServices({
        db: undefined as never,
        clock: systemClock,
        dataDir: tempDir(),
        secretKey: 'not-a-key',
      }),
    ).toThrow(ConfigError);
  });

  it('without WARMUP_SECRET_KEY makes <dataDir>/secret.key once, mode 0600, and reuses it', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const first = loadSecretKey({ secretKey: undefined, dataDir });
    const file = path.join(dataDir, SECRET_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(first).toHaveLength(32);
    expect(loadSecretKey({ secretKey: '', dataDir }).equals(first)).toBe(true);
    expect(fs.readdirSync(dataDir)).toEqual([SECRET_KEY_FILE]);
  });

  it('refuses a damaged key file instead of silently making a new key', () => {
    const dataDir = tempDir();
    fs.writeFileSync(path.join(dataDir, SECRET_KEY_FILE), 'garbage\n');
    expect(() => loadSecretKey({ secretKey: undefined, dataDir })).toThrow(/does not hold a 32-byte key/);
  });

  it('processes starting together all end up with the one key', async () => {
    const dataDir = tempDir();
    const moduleUrl = new URL('./secrets.ts', import.meta.url).href;
    const startAt = Date.now() + 2_500;
    // Each child waits for the same instant, then loads the key: they race for the file.
    const child = `
      const { loadSecretKey } = await import(${JSON.stringify(moduleUrl)});
      while (Date.now() < ${startAt}) {}
      process.stdout.write(loadSecretKey({ secretKey: undefined, dataDir: ${JSON.stringify(dataDir)} }).toString('hex'));
    `;
    const cwd = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const run = () =>
      new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', child],
          { cwd, timeout: 20_000 },
          (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
        );
      });
    const keys = await Promise.all(Array.from({ length: 4 }, run));
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(1);
    expect(fs.readFileSync(path.join(dataDir, SECRET_KEY_FILE), 'utf8').trim()).toBe(keys[0]);
    expect(fs.readdirSync(dataDir)).toEqual([SECRET_KEY_FILE]);
  }, 30_000);
});

describe('encryptSecret / decryptSecret', () => {
  const key = randomBytes(32);

  it('round-trips, with a version prefix and a fresh nonce every time', () => {
    const secret = 'abcdefghijklmnop-ünïcødé';
    const a = encryptSecret(key, secret, 'mbx_1');
    const b = encryptSecret(key, secret, 'mbx_1');
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(a.split(':')[1]).not.toBe(b.split(':')[1]);
    expect(Buffer.from(a.split(':')[1], 'base64')).toHaveLength(12);
    expect(a).not.toContain(secret);
    expect(decryptSecret(key, a, 'mbx_1')).toBe(secret);
    expect(decryptSecret(key, b, 'mbx_1')).toBe(secret);
  });

  it('refuses another key, another record, a changed byte and an unknown version', () => {
    const stored = encryptSecret(key, 'app-password', 'mbx_1');
    expect(() => decryptSecret(randomBytes(32), stored, 'mbx_1')).toThrow(SecretDecryptionError);
    expect(() => decryptSecret(key, stored, 'mbx_2')).toThrow(SecretDecryptionError);
    const [version, nonce, data, tag] = stored.split(':');
    const flipped = Buffer.from(data, 'base64');
    flipped[0] ^= 1;
    expect(() => decryptSecret(key, [version, nonce, flipped.toString('base64'), tag].join(':'), 'mbx_1')).toThrow(
      SecretDecryptionError,
    );
    expect(() => decryptSecret(key, stored.replace(/^v1:/, 'v9:'), 'mbx_1')).toThrow(/unknown secret format/);
    expect(() => decryptSecret(key, 'app-password', 'mbx_1')).toThrow(SecretDecryptionError);
  });
});
