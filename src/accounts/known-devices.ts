import { createHmac, randomBytes } from 'node:crypto';
import { sameToken } from '../http/auth.js';

/** The cookie that marks a browser in which a person signed in with their password before. */
export const DEVICE_COOKIE = 'warmup_device';
/** A browser stays known this long after its last successful sign-in. */
export const DEVICE_COOKIE_MAX_AGE_S = 180 * 24 * 60 * 60;

/**
 * Signed device cookies: `<device id>.<HMAC of user id and device id>`, keyed from the
 * installation's secret key, so no table is needed and no one can make one for an account they
 * never signed in to. A browser is known to one account (the last it signed in as).
 */
export function createKnownDevices(secretKey: Buffer) {
  const key = createHmac('sha256', secretKey).update('warmup known-device cookie').digest();
  const mac = (userId: string, deviceId: string) =>
    createHmac('sha256', key).update(`${userId}.${deviceId}`).digest('base64url');
  return {
    /** A new cookie value for a browser that just proved the user's password. */
    issue(userId: string): string {
      const deviceId = randomBytes(16).toString('base64url');
      return `${deviceId}.${mac(userId, deviceId)}`;
    },
    /** The device id of a cookie value the user's browser got at a sign-in, or undefined. */
    identify(value: string | undefined, userId: string): string | undefined {
      const [deviceId, signature, rest] = (value ?? '').split('.');
      if (!deviceId || !signature || rest !== undefined || deviceId.length > 64) return undefined;
      return sameToken(signature, mac(userId, deviceId)) ? deviceId : undefined;
    },
  };
}

export type KnownDevices = ReturnType<typeof createKnownDevices>;

/**
 * The setup token of an installation: derived from its secret key, so every replica prints and
 * accepts the same one and no state is kept; it opens nothing once the first owner exists.
 */
export function deriveSetupToken(secretKey: Buffer): string {
  return createHmac('sha256', secretKey).update('warmup first-run setup token').digest('base64url').slice(0, 32);
}
