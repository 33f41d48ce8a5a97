/*
 * One environment variable as the service reads it: its name, its default, what it does, and the
 * parser that turns the text into a value or a ConfigError. config.ts, oauth/oauth.config.ts and
 * oidc/oidc.config.ts declare their settings with these, and the configuration reference
 * (docs/reference/configuration.md) is generated from the same declarations, so the two cannot
 * disagree. This module sits below all three and imports none of them.
 */

export class ConfigError extends Error {}

/** What the configuration reference shows of a setting. */
export interface SettingDoc {
  /** The environment variable; `<PROVIDER>` stands for each of a family (GOOGLE, MICROSOFT, GENERIC). */
  name: string;
  /** The value used when it is unset, as a reader would write it; `unset` when there is none. */
  default: string;
  /** The values it accepts, when the reader must be told (a range, a list); the parser enforces them. */
  allowed?: string;
  /** What it does, one or two sentences of Markdown. */
  description: string;
}

export interface Setting<T> extends SettingDoc {
  read(env: NodeJS.ProcessEnv): T;
}

/** A setting whose text (unset or empty: undefined) `parse` turns into its value. */
export function setting<T>(
  name: string,
  defaultText: string,
  description: string,
  parse: (raw: string | undefined, name: string) => T,
  allowed?: string,
): Setting<T> {
  return {
    name,
    default: defaultText,
    ...(allowed === undefined ? {} : { allowed }),
    description,
    read: (env) => parse(env[name] === '' ? undefined : env[name], name),
  };
}

/** A whole number from `min` to `max`; unset: `fallback` (undefined: no value). */
export function integerSetting(name: string, fallback: number, min: number, max: number, description: string) {
  return setting(
    name,
    `\`${fallback}\``,
    description,
    (raw) => (raw === undefined ? fallback : integer(name, raw, min, max)),
    `${min}–${max}`,
  );
}

/** A whole number from `min` to `max` that has no value when unset. */
export function optionalIntegerSetting(name: string, min: number, max: number, description: string) {
  return setting(
    name,
    'unset',
    description,
    (raw) => (raw === undefined ? undefined : integer(name, raw, min, max)),
    `${min}–${max}`,
  );
}

function integer(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** `true`/`1` or `false`/`0`; unset: false. */
export function booleanSetting(name: string, description: string) {
  return setting(
    name,
    '`false`',
    description,
    (raw) => {
      if (raw === undefined || raw === 'false' || raw === '0') return false;
      if (raw === 'true' || raw === '1') return true;
      throw new ConfigError(`${name} must be true or false, got "${raw}"`);
    },
    '`true`, `false`, `1`, `0`',
  );
}

/** Free text; unset: `fallback`. */
export function textSetting(name: string, fallback: string, description: string): Setting<string>;
export function textSetting(name: string, fallback: undefined, description: string): Setting<string | undefined>;
export function textSetting(name: string, fallback: string | undefined, description: string) {
  return setting(name, fallback === undefined ? 'unset' : `\`${fallback}\``, description, (raw) => raw ?? fallback);
}

/** One of `choices`; unset: `fallback`. */
export function choiceSetting<const C extends string>(
  name: string,
  choices: readonly C[],
  fallback: C,
  description: string,
): Setting<C> {
  return setting(
    name,
    `\`${fallback}\``,
    description,
    (raw) => {
      const value = raw ?? fallback;
      if (!(choices as readonly string[]).includes(value)) {
        throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${value}"`);
      }
      return value as C;
    },
    choices.map((choice) => `\`${choice}\``).join(', '),
  );
}

/** A secret (a key, a token): no spaces, and long enough not to be guessed. */
export function secretSetting(name: string, minLength: number, description: string) {
  return setting(
    name,
    'unset',
    description,
    (secret) => {
      if (secret === undefined) return undefined;
      if (/\s/.test(secret)) throw new ConfigError(`${name} must not contain spaces`);
      if (secret.length < minLength) {
        // Never echo the secret itself: this message ends up in logs.
        throw new ConfigError(
          `${name} must be at least ${minLength} characters (it has ${secret.length}); make one with: openssl rand -hex 32`,
        );
      }
      return secret;
    },
    `${minLength} or more characters, no spaces`,
  );
}

/** An absolute http(s) URL, without trailing slashes. */
export function urlSetting(name: string, description: string) {
  return setting(name, 'unset', description, (raw) => (raw === undefined ? undefined : parseUrl(name, raw)));
}

export function parseUrl(name: string, raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ConfigError(`${name} must be an https:// URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** Items separated by commas or spaces. */
export function listOf(raw: string | undefined): string[] {
  return (raw ?? '').split(/[\s,]+/).filter(Boolean);
}
