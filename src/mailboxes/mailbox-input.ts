/*
 * A request's mailbox settings checked and merged over what is stored (or a provider's preset):
 * every rule that spans fields, and the refusals that keep a password with its servers.
 */
import { canonicalTimeZone } from '../calendar.js';
import { AppError, ValidationError, type FieldError } from '../http/errors.js';
import type { ServerSettings, ServerSettingsInput, WarmupSettings, WarmupSettingsInput } from './mailboxes.schemas.js';
import { isKnownProvider, PROVIDERS } from './providers.js';

export type Side = 'imap' | 'smtp';

/** Pasted app passwords come in groups ("abcd efgh ijkl mnop"); no app password holds whitespace. */
export function cleanPassword(password: string, errors: FieldError[]): string {
  const cleaned = password.replace(/\s+/g, '');
  if (cleaned === '') errors.push({ path: '/body/password', message: 'must contain a character other than spaces' });
  return cleaned;
}

/**
 * One server's settings: the current ones (or the provider's preset) with the request's fields on
 * top. `custom` has no preset, so there the request must name host, port and secure.
 */
export function resolveServer(
  side: Side,
  provider: string,
  current: ServerSettings | undefined,
  input: ServerSettingsInput | undefined,
  email: string,
  errors: FieldError[],
): ServerSettings | undefined {
  let base: Partial<ServerSettings> | undefined = current;
  if (!base && isKnownProvider(provider)) base = { ...PROVIDERS[provider][side] };
  if (!base) {
    if (!input) {
      errors.push({ path: `/body/${side}`, message: 'is required when provider is custom' });
      return undefined;
    }
    const missing = (['host', 'port', 'secure'] as const).filter((field) => input[field] === undefined);
    for (const field of missing)
      errors.push({ path: `/body/${side}/${field}`, message: 'is required when provider is custom' });
    if (missing.length > 0) return undefined;
    base = {};
  }
  const merged = { ...base, ...input };
  const tls = { ...base.tls, ...input?.tls };
  const settings: ServerSettings = {
    host: merged.host as string,
    port: merged.port as number,
    secure: merged.secure as boolean,
    username: merged.username ?? email,
  };
  if (Object.keys(tls).length > 0) settings.tls = tls;
  return settings;
}

/** Settings merged over `base`; rules that span fields name the field the request sent. */
export function resolveWarmup(
  base: WarmupSettings,
  input: WarmupSettingsInput | undefined,
  errors: FieldError[],
): WarmupSettings {
  const merged: WarmupSettings = { ...base, ...input, sendWindow: { ...base.sendWindow, ...input?.sendWindow } };
  if (merged.startVolume > merged.dailyLimit) {
    if (input?.startVolume !== undefined || input?.dailyLimit === undefined) {
      errors.push({ path: '/body/warmup/startVolume', message: `must be at most dailyLimit (${merged.dailyLimit})` });
    } else {
      errors.push({ path: '/body/warmup/dailyLimit', message: `must be at least startVolume (${merged.startVolume})` });
    }
  }
  if (merged.sendWindow.start >= merged.sendWindow.end) {
    if (input?.sendWindow?.end !== undefined || input?.sendWindow?.start === undefined) {
      errors.push({
        path: '/body/warmup/sendWindow/end',
        message: `must be later than sendWindow.start (${merged.sendWindow.start})`,
      });
    } else {
      errors.push({
        path: '/body/warmup/sendWindow/start',
        message: `must be earlier than sendWindow.end (${merged.sendWindow.end})`,
      });
    }
  }
  const timezone = canonicalTimeZone(merged.timezone);
  if (timezone === undefined) {
    errors.push({
      path: '/body/warmup/timezone',
      message: 'must be an IANA time zone name such as Europe/Berlin or UTC',
    });
  } else {
    merged.timezone = timezone;
  }
  return merged;
}

/**
 * Certificates are always checked; a private server's CA is trusted by the operator
 * (WARMUP_MAIL_CA_FILE), not turned off per mailbox.
 */
export function refuseUncheckedTls(side: Side, input: ServerSettingsInput | undefined, errors: FieldError[]): void {
  if (input?.tls?.rejectUnauthorized === false) {
    errors.push({
      path: `/body/${side}/tls/rejectUnauthorized`,
      message: 'certificate checks cannot be turned off; the operator can trust a private CA with WARMUP_MAIL_CA_FILE',
    });
  }
}

/** The stored password may only be sent to the servers it was given for. */
export function movesServer(current: ServerSettings, next: ServerSettings): boolean {
  return current.host.toLowerCase() !== next.host.toLowerCase() || current.port !== next.port;
}

/** A 400 with its own code: the request must carry the password to go with a new host. */
export class PasswordRequiredError extends AppError {
  constructor(sides: Side[]) {
    const servers = sides.map((side) => side.toUpperCase()).join(' and ');
    super(400, 'password_required', `changing the ${servers} host or port requires the password in the same request`, [
      { path: '/body/password', message: `is required when the ${servers} host or port changes` },
    ]);
  }
}

export function throwIfInvalid(errors: FieldError[]): void {
  if (errors.length === 0) return;
  const [first] = errors;
  const where = first.path.split('/').filter(Boolean).slice(1).join('.');
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  throw new ValidationError(`${where} ${first.message}${more}`, errors);
}
