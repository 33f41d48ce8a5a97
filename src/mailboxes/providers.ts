/**
 * Connection presets of the mail providers a user can pick. `secure: true` is implicit TLS
 * (993/465), `false` is STARTTLS (587). `appPasswordRequired` says whether the provider refuses
 * the account password over IMAP/SMTP (with 2-step verification on, which it should be), so the
 * dashboard can send the user to `helpUrl` before they type anything. `passwordLogin: false`
 * says no password works at all any more (Microsoft): such mailboxes connect with OAuth
 * (`oauthProvider`). As of 2026.
 */
import { KNOWN_PROVIDERS, type KnownProvider, type ProviderPreset } from './mailboxes.schemas.js';

export const PROVIDERS: Readonly<Record<KnownProvider, ProviderPreset>> = {
  gmail: {
    id: 'gmail',
    name: 'Gmail / Google Workspace',
    imap: { host: 'imap.gmail.com', port: 993, secure: true },
    smtp: { host: 'smtp.gmail.com', port: 465, secure: true },
    appPasswordRequired: true,
    passwordLogin: true,
    oauthProvider: 'google',
    helpUrl: 'https://support.google.com/accounts/answer/185833',
    notes:
      'Connect with Google (OAuth) where the operator set it up. Otherwise: app passwords work only with 2-Step Verification on, and Google Workspace administrators can forbid them; create one (16 letters; spaces are ignored).',
  },
  outlook: {
    id: 'outlook',
    name: 'Outlook / Microsoft 365',
    imap: { host: 'outlook.office365.com', port: 993, secure: true },
    smtp: { host: 'smtp.office365.com', port: 587, secure: false },
    appPasswordRequired: false,
    passwordLogin: false,
    oauthProvider: 'microsoft',
    helpUrl:
      'https://learn.microsoft.com/en-us/exchange/clients-and-mobile-in-exchange-online/deprecation-of-basic-authentication-exchange-online',
    notes:
      'Connect with Microsoft (OAuth): Microsoft 365 turned off password sign-in to IMAP in 2022 and Outlook.com in September 2024 (app passwords included), and password SMTP AUTH is off by default for Microsoft 365 from the end of December 2026. On Microsoft 365 an administrator must allow IMAP and SMTP AUTH for the mailbox.',
  },
  yahoo: {
    id: 'yahoo',
    name: 'Yahoo Mail',
    imap: { host: 'imap.mail.yahoo.com', port: 993, secure: true },
    smtp: { host: 'smtp.mail.yahoo.com', port: 465, secure: true },
    appPasswordRequired: true,
    passwordLogin: true,
    oauthProvider: null,
    helpUrl: 'https://help.yahoo.com/kb/SLN15241.html',
    notes: 'Generate an app password under Account Security.',
  },
  zoho: {
    id: 'zoho',
    name: 'Zoho Mail',
    imap: { host: 'imap.zoho.com', port: 993, secure: true },
    smtp: { host: 'smtp.zoho.com', port: 465, secure: true },
    appPasswordRequired: false,
    passwordLogin: true,
    oauthProvider: null,
    helpUrl: 'https://www.zoho.com/mail/help/imap-access.html',
    notes:
      'Enable IMAP access in the Zoho Mail settings; with two-factor authentication use an application-specific password. Addresses on your own domain use imappro.zoho.com / smtppro.zoho.com and other data centres their own hosts (imap.zoho.eu, ...): override imap and smtp.',
  },
  icloud: {
    id: 'icloud',
    name: 'iCloud Mail',
    imap: { host: 'imap.mail.me.com', port: 993, secure: true },
    smtp: { host: 'smtp.mail.me.com', port: 587, secure: false },
    appPasswordRequired: true,
    passwordLogin: true,
    oauthProvider: null,
    helpUrl: 'https://support.apple.com/en-us/102654',
    notes: 'Create an app-specific password for your Apple Account; sign in with the full iCloud address.',
  },
  fastmail: {
    id: 'fastmail',
    name: 'Fastmail',
    imap: { host: 'imap.fastmail.com', port: 993, secure: true },
    smtp: { host: 'smtp.fastmail.com', port: 465, secure: true },
    appPasswordRequired: true,
    passwordLogin: true,
    oauthProvider: null,
    helpUrl: 'https://www.fastmail.help/hc/en-us/articles/360058752854-App-passwords',
    notes: 'Create an app password with IMAP and SMTP access.',
  },
};

export function isKnownProvider(provider: string): provider is KnownProvider {
  return (KNOWN_PROVIDERS as readonly string[]).includes(provider);
}
