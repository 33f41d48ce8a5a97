import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_REFERENCE, renderConfigurationReference } from '../../bin/docs-config.js';
import { ALL_SETTINGS, loadConfig, SETTINGS } from '../../src/config.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-delivery.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const PROVIDERS = ['GOOGLE', 'MICROSOFT', 'GENERIC'];

/** Every variable name the reference documents, with `<PROVIDER>` spelled out. */
const documented = new Set(
  ALL_SETTINGS.flatMap((s) =>
    s.name.includes('<PROVIDER>') ? PROVIDERS.map((p) => s.name.replace('<PROVIDER>', p)) : [s.name],
  ),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'dist' || entry.name === 'node_modules' ? [] : sourceFiles(full);
    return /\.(ts|tsx|mjs|js)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** loadConfig under `env`, noting every variable it looks at. */
function variablesRead(env: Record<string, string>): string[] {
  const seen = new Set<string>();
  const recording = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') seen.add(key);
      return target[key as string];
    },
  });
  loadConfig(recording);
  return [...seen];
}

describe('the configuration reference (docs/reference/configuration.md)', () => {
  it('is what `npm run docs:config` generates from the settings now', async () => {
    const committed = readFileSync(CONFIGURATION_REFERENCE, 'utf8');
    // On failure: run `npm run docs:config` and commit the page.
    expect(committed).toBe(await renderConfigurationReference());
  });

  it('documents every variable loadConfig reads, every OAuth provider and OpenID Connect sign-in turned on', () => {
    const everything: Record<string, string> = {
      WARMUP_PUBLIC_URL: 'https://warmup.example.com',
      WARMUP_OIDC_ISSUER: 'https://id.example.com',
      WARMUP_OIDC_CLIENT_ID: 'id',
      WARMUP_OIDC_CLIENT_SECRET: 'secret',
      WARMUP_METRICS_PORT: '9464',
    };
    for (const provider of PROVIDERS) {
      const prefix = `WARMUP_OAUTH_${provider}`;
      Object.assign(everything, {
        [`${prefix}_CLIENT_ID`]: 'id',
        [`${prefix}_CLIENT_SECRET`]: 'secret',
        [`${prefix}_AUTHORIZATION_URL`]: 'https://id.example.com/authorize',
        [`${prefix}_TOKEN_URL`]: 'https://id.example.com/token',
        [`${prefix}_IMAP_HOST`]: 'mail.example.com',
        [`${prefix}_IMAP_PORT`]: '993',
        [`${prefix}_IMAP_SECURE`]: 'true',
        [`${prefix}_SMTP_HOST`]: 'mail.example.com',
        [`${prefix}_SMTP_PORT`]: '465',
        [`${prefix}_SMTP_SECURE`]: 'true',
      });
    }
    const read = [...variablesRead({}), ...variablesRead(everything)];
    expect(read).toContain('WARMUP_OAUTH_GENERIC_SMTP_SECURE');
    expect(read.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('documents every variable named anywhere in src/', () => {
    const named = new Set<string>();
    for (const file of sourceFiles(SRC)) {
      const text = readFileSync(file, 'utf8');
      // a quoted name ('WARMUP_API_KEY'), or one read directly (env.LOG_LEVEL, env['PORT'])
      const patterns = [
        /['"`]((?:WARMUP_[A-Z0-9_]+)|DATABASE_URL|LOG_LEVEL|LOG_FORMAT|PORT|HOST)['"`]/g,
        /\benv\.([A-Z][A-Z0-9_]*)\b/g,
        /\benv\[['"`]([A-Z][A-Z0-9_]*)['"`]\]/g,
      ];
      for (const pattern of patterns) for (const match of text.matchAll(pattern)) named.add(match[1]!);
    }
    expect(named.size).toBeGreaterThan(30);
    expect([...named].filter((name) => !documented.has(name))).toEqual([]);
  });

  it('states the webhook retry schedule the webhook delivery uses when none is set', () => {
    const seconds = DEFAULT_WEBHOOK_SETTINGS.retryDelaysMs.map((ms) => ms / 1000).join(',');
    expect(SETTINGS.webhookRetrySchedule.default).toBe(`\`${seconds}\``);
  });

  it('states the defaults loadConfig applies', () => {
    const config = loadConfig({});
    expect(SETTINGS.port.default).toBe(`\`${config.port}\``);
    expect(SETTINGS.rateLimit.default).toBe(`\`${config.rateLimit}\``);
    expect(SETTINGS.ipZones.default).toBe(`\`${config.blocklists.ipZones.join(',')}\``);
    expect(SETTINGS.retentionDays.default).toBe(`\`${config.retentionDays}\``);
  });
});
