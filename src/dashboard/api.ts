// The dashboard's client of the public HTTP API: a person's calls ride on the session cookie (with
// the session's CSRF token on every change), an API key's carry it as a bearer token; every error
// arrives as problem+json and becomes an ApiError, and a 401 anywhere signs out.

import type {
  CreateMailboxBody as MailboxCreate,
  HumanReply,
  ImportRowResult,
  Interaction,
  Mailbox,
  WarmupState,
  MailboxImport,
  MailboxStatus,
  ProviderPreset,
  ServerSettingsInput as ServerSettings,
  UpdateMailboxBody as MailboxPatch,
  WarmupSettings,
} from '../mailboxes/mailboxes.schemas.js';
import type {
  Analytics,
  DailyRow,
  DailySummary,
  DashboardStats,
  ExportRow,
  MailboxStats,
  PeriodQuery,
  Placement,
  Rates,
  Reputation,
  Totals,
} from '../stats/stats.schemas.js';
import type { Preview, Template, TemplateFields, TemplateListQuery } from '../templates/templates.schemas.js';
import type { Alerts, Webhook, WebhookDelivery, WebhookDeliveryList } from '../webhooks/webhooks.schemas.js';
import type {
  BlocklistListing,
  DkimSelector,
  DnsCheck,
  MailboxChecks,
  MailboxDnsStatus,
} from '../checks/checks.schemas.js';
import type { MailboxVerdicts } from '../verdicts/verdicts.schemas.js';
import type { Pagination } from '../http/common.schemas.js';
import type {
  CreatePlacementTestBody,
  PlacementTest,
  PlacementTestList,
} from '../placement-tests/placement-tests.schemas.js';
import type { OAuthProviderId, PendingConnect } from '../oauth/oauth.schemas.js';
import type { DmarcDomainDetail, DmarcDomains, DmarcSource, DmarcSourceBody } from '../dmarc/dmarc.schemas.js';
import type { ProviderVerdicts } from '../feeds/feeds.schemas.js';
import type { CreatePeerBody, Peer, PeerIdentity } from '../peers/peers.schemas.js';
import type { ConnectionFailure, FieldError } from '../http/errors.js';
import type { Role } from '../http/access.js';
import type {
  ApiKey,
  CreatedApiKey,
  Onboarding,
  OnboardingStepId,
  UpdateWorkspaceSettingsBody,
  WorkspaceSettings,
} from '../workspaces/workspaces.schemas.js';
import type {
  CreatedInvite,
  Invite,
  InvitePreview,
  Member,
  MemberAccess,
  SessionInfo,
  SetupStatus,
} from '../accounts/accounts.schemas.js';

// The shapes are the server's own schemas (type-only imports: nothing of the server is bundled).
export type {
  Analytics,
  BlocklistListing,
  ConnectionFailure,
  DnsCheck,
  MailboxChecks,
  MailboxDnsStatus,
  DailyRow,
  DailySummary,
  DashboardStats,
  ExportRow,
  FieldError,
  HumanReply,
  ImportRowResult,
  Interaction,
  Mailbox,
  MailboxCreate,
  MailboxImport,
  MailboxPatch,
  MailboxStats,
  MailboxStatus,
  WarmupState,
  MailboxVerdicts,
  OAuthProviderId,
  Pagination,
  PeriodQuery,
  Placement,
  Preview,
  ProviderPreset,
  Rates,
  Reputation,
  ServerSettings,
  Template,
  TemplateFields,
  TemplateListQuery,
  Totals,
  WarmupSettings,
  Alerts,
  Webhook,
  WebhookDelivery,
  PlacementTest,
  DmarcDomainDetail,
  DmarcDomains,
  DmarcSource,
  ProviderVerdicts,
};

export type { Onboarding, OnboardingStepId, WorkspaceSettings };
export type { Peer, PeerIdentity };
export type { ApiKey, CreatedApiKey, CreatedInvite, Invite, InvitePreview, Member, MemberAccess, Role, SessionInfo };

export type InteractionType = Interaction['type'];

/** An answer other than 2xx, with the problem details the API sends. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
    /** `connection_failed`: each server whose login failed, with the problem and its fix. */
    readonly failures: ConnectionFailure[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Field errors by request path without its `/body` or `/query` root (`name`, `imap/host`), in plain words. */
  fieldErrors(): Record<string, string> {
    const byField: Record<string, string> = {};
    for (const error of this.errors) {
      const field = error.path.split('/').filter(Boolean).slice(1).join('/');
      if (!field) continue;
      // every error of a field, each once (a body can have several problems at once)
      const message = plainWords(error.message);
      const known = byField[field];
      if (known === undefined) byField[field] = message;
      else if (!known.split('\n').includes(message)) byField[field] = `${known}\n${message}`;
    }
    return byField;
  }
}

// The API already words each field error for a person (one mapping, src/http/validation.ts);
// next to a field it only starts with a capital.
function plainWords(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

const KEY_STORAGE = 'warmup.apiKey';

export const session = {
  key(): string | null {
    try {
      return sessionStorage.getItem(KEY_STORAGE);
    } catch {
      return null;
    }
  },
  signIn(key: string): void {
    sessionStorage.setItem(KEY_STORAGE, key);
  },
  signOut(): void {
    sessionStorage.removeItem(KEY_STORAGE);
  },
};

// The signed-in session's CSRF token (from GET /api/session), sent with every state-changing call.
let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when any request answers 401: the key is gone or revoked. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export type Query = Record<string, string | number | boolean | undefined | null>;

function url(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const search = params.toString();
  return `/api${path}${search ? `?${search}` : ''}`;
}

async function problemOf(response: Response): Promise<ApiError> {
  let body: {
    code?: string;
    detail?: string;
    title?: string;
    errors?: FieldError[];
    failures?: ConnectionFailure[];
  } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    // Not problem+json (a proxy in between, a crash): the status line is all there is.
  }
  const message = body.detail || body.title || `The server answered ${response.status} ${response.statusText}`.trim();
  return new ApiError(response.status, body.code ?? 'http_error', message, body.errors ?? [], body.failures ?? []);
}

async function send(
  method: string,
  path: string,
  options: {
    query?: Query;
    body?: unknown;
    key?: string;
    /** A body sent as it is (a CSV file), with its type, and the answer's type asked for. */
    raw?: { body: string; contentType: string; accept: string };
    /** A 401 is an answer, not a lost session (checking whether anyone is signed in). */
    quiet?: boolean;
  } = {},
): Promise<Response> {
  const key = options.key ?? session.key();
  const headers: Record<string, string> = { accept: options.raw?.accept ?? 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  else if (csrfToken && method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.raw) headers['content-type'] = options.raw.contentType;
  let response: Response;
  try {
    response = await fetch(url(path, options.query), {
      method,
      headers,
      body: options.raw ? options.raw.body : options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'Cannot reach the Warmup server. Check your connection and try again.');
  }
  if (response.ok) return response;
  const error = await problemOf(response);
  if (response.status === 401 && !options.key && !options.quiet) {
    for (const listener of unauthorizedListeners) listener();
  }
  throw error;
}

async function json<T>(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown; key?: string; quiet?: boolean } = {},
): Promise<T> {
  const response = await send(method, path, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/**
 * Sends a CSV file to the mailbox import and hands each row's result to `onRow` as the server
 * decides it (the answer is one JSON line per row, then the totals).
 */
async function importMailboxes(csv: string, onRow: (row: ImportRowResult) => void): Promise<MailboxImport> {
  const response = await send('POST', '/mailboxes/import', {
    raw: { body: csv, contentType: 'text/csv', accept: 'application/x-ndjson' },
  });
  if (!response.body) throw new ApiError(0, 'network_error', 'The server sent no answer to the import.');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  let summary: MailboxImport | undefined;
  const take = (line: string) => {
    if (line.trim() === '') return;
    const item = JSON.parse(line) as { row?: ImportRowResult; import?: MailboxImport; error?: string };
    if (item.row) onRow(item.row);
    if (item.import) summary = item.import;
    if (item.error) throw new ApiError(500, 'internal_error', item.error);
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += value;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    lines.forEach(take);
  }
  take(buffered);
  if (!summary)
    throw new ApiError(0, 'network_error', 'The import was cut off before it finished; send the file again.');
  return summary;
}

/** The file name a download answer suggests in Content-Disposition. */
function attachmentName(response: Response, fallback: string): string {
  const header = response.headers.get('content-disposition') ?? '';
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star?.[1]) return decodeURIComponent(star[1]);
  const plain = /filename="?([^";]+)"?/i.exec(header);
  return plain?.[1] ?? fallback;
}

/** Hands `blob` to the browser as a file download named `name`. */
export function saveFile(blob: Blob, name: string): void {
  const href = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = href;
  link.download = name;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

/** Fetches with the bearer header and hands the answer to the browser as a file download. */
async function download(path: string, query: Query, fallbackName: string): Promise<string> {
  const response = await send('GET', path, { query });
  const name = attachmentName(response, fallbackName);
  saveFile(await response.blob(), name);
  return name;
}

export const api = {
  webhooks: () => json<{ webhooks: Webhook[] }>('GET', '/webhooks').then((r) => r.webhooks),
  placementTests: () => json<PlacementTestList>('GET', '/placement-tests', { query: { limit: 20 } }),
  createPlacementTest: (body: CreatePlacementTestBody) =>
    json<{ placementTest: PlacementTest }>('POST', '/placement-tests', { body }).then((r) => r.placementTest),
  createWebhook: (body: { url: string; events: string[]; kind?: 'standard' | 'slack' | 'teams' }) =>
    json<{ webhook: Webhook; secret?: string }>('POST', '/webhooks', { body }),
  dmarcSource: () => json<{ source: DmarcSource | null }>('GET', '/dmarc/source').then((r) => r.source),
  setDmarcSource: (body: DmarcSourceBody) =>
    json<{ source: DmarcSource }>('PUT', '/dmarc/source', { body }).then((r) => r.source),
  dmarcDomains: () => json<DmarcDomains>('GET', '/dmarc/domains'),
  dmarcDomain: (domain: string) => json<DmarcDomainDetail>('GET', `/dmarc/domains/${encodeURIComponent(domain)}`),
  authorizePostmaster: (domains: string[]) =>
    json<{ authorization: { authorizationUrl: string } }>('POST', '/feeds/postmaster/authorize', {
      body: { domains },
    }).then((r) => r.authorization.authorizationUrl),
  providerVerdicts: (domain: string) => json<ProviderVerdicts>('GET', `/feeds/domains/${encodeURIComponent(domain)}`),
  peerIdentity: () => json<PeerIdentity>('GET', '/peers/identity'),
  peers: () => json<{ peers: Peer[] }>('GET', '/peers').then((r) => r.peers),
  addPeer: (body: CreatePeerBody) => json<{ peer: Peer }>('POST', '/peers', { body }).then((r) => r.peer),
  pausePeer: (id: string) => json<{ peer: Peer }>('POST', `/peers/${encodeURIComponent(id)}/pause`),
  resumePeer: (id: string) => json<{ peer: Peer }>('POST', `/peers/${encodeURIComponent(id)}/resume`),
  removePeer: (id: string) => json<void>('DELETE', `/peers/${encodeURIComponent(id)}`),
  alerts: () => json<{ alerts: Alerts }>('GET', '/alerts').then((r) => r.alerts),
  setEmailAlerts: (events: string[]) =>
    json<{ alerts: Alerts }>('PUT', '/alerts/email', { body: { events } }).then((r) => r.alerts),
  testEmailAlerts: () => json<{ delivery: { id: string } }>('POST', '/alerts/email/test'),
  deleteWebhook: (id: string) => json<void>('DELETE', `/webhooks/${encodeURIComponent(id)}`),
  testWebhook: (id: string) =>
    json<{ delivery: WebhookDelivery }>('POST', `/webhooks/${encodeURIComponent(id)}/test`).then((r) => r.delivery),
  webhookDeliveries: (id: string) =>
    json<WebhookDeliveryList>('GET', `/webhooks/${encodeURIComponent(id)}/deliveries`, { query: { limit: 20 } }),
  workspace: (key?: string) =>
    json<{ workspace: { id: string; name: string }; role: Role }>('GET', '/workspace', { key }),
  onboarding: () => json<{ onboarding: Onboarding }>('GET', '/workspace/onboarding').then((r) => r.onboarding),
  updateWorkspaceSettings: (body: UpdateWorkspaceSettingsBody) =>
    json<{ settings: WorkspaceSettings }>('PATCH', '/workspace/settings', { body }).then((r) => r.settings),

  apiKeys: () => json<{ keys: ApiKey[] }>('GET', '/keys').then((r) => r.keys),
  createApiKey: (body: { name: string; role: Exclude<Role, 'owner'> }) =>
    json<CreatedApiKey>('POST', '/keys', { body }),
  revokeApiKey: (id: string) => json<void>('DELETE', `/keys/${encodeURIComponent(id)}`),
  reissueApiKey: (id: string) => json<CreatedApiKey>('POST', `/keys/${encodeURIComponent(id)}/reissue`),
  setupStatus: () => json<SetupStatus>('GET', '/setup', { quiet: true }),
  setUp: (body: { name: string; email: string; password: string; workspaceName: string; setupToken?: string }) =>
    json<SessionInfo>('POST', '/setup', { body, quiet: true }),
  signIn: (body: { email: string; password: string }) => json<SessionInfo>('POST', '/session', { body, quiet: true }),
  oidcSignIn: () => json<{ enabled: boolean; name: string | null }>('GET', '/session/oidc', { quiet: true }),
  currentSession: () => json<SessionInfo>('GET', '/session', { quiet: true }),
  signOut: () => json<void>('DELETE', '/session', { quiet: true }),
  signOutEverywhere: () => json<void>('POST', '/session/sign-out-everywhere', { quiet: true }),
  changePassword: (body: { currentPassword: string; newPassword: string }) =>
    json<void>('POST', '/account/password', { body }),
  switchWorkspace: (workspaceId: string) => json<SessionInfo>('PUT', '/session/workspace', { body: { workspaceId } }),
  createWorkspace: (name: string) =>
    json<{ workspace: { id: string; name: string } }>('POST', '/workspaces', { body: { name } }),
  members: () => json<{ members: Member[] }>('GET', '/workspace/members').then((r) => r.members),
  updateMember: (userId: string, role: Role) =>
    json<Member>('PATCH', `/workspace/members/${encodeURIComponent(userId)}`, { body: { role } }),
  removeMember: (userId: string) => json<void>('DELETE', `/workspace/members/${encodeURIComponent(userId)}`),
  memberAccess: (userId: string) =>
    json<MemberAccess>('GET', `/workspace/members/${encodeURIComponent(userId)}/access`),
  invites: () => json<{ invites: Invite[] }>('GET', '/workspace/invites').then((r) => r.invites),
  createInvite: (body: { role: Role; email?: string }) => json<CreatedInvite>('POST', '/workspace/invites', { body }),
  revokeInvite: (id: string) => json<void>('DELETE', `/workspace/invites/${encodeURIComponent(id)}`),
  invite: (token: string) => json<InvitePreview>('GET', `/invites/${encodeURIComponent(token)}`, { quiet: true }),
  acceptInvite: (token: string, body: { email: string; password: string; name?: string }) =>
    json<SessionInfo>('POST', `/invites/${encodeURIComponent(token)}/accept`, { body, quiet: true }),

  dashboard: (period?: PeriodQuery) =>
    json<{ stats: DashboardStats }>('GET', '/stats/dashboard', { query: { ...period } }).then((r) => r.stats),
  analytics: (period: PeriodQuery, mailboxId?: string) =>
    json<{ analytics: Analytics }>('GET', '/stats/analytics', { query: { ...period, mailboxId } }).then(
      (r) => r.analytics,
    ),
  reputation: (period: PeriodQuery, mailboxId?: string) =>
    json<{ reputation: Reputation }>('GET', '/stats/reputation', { query: { ...period, mailboxId } }).then(
      (r) => r.reputation,
    ),
  dailySummary: (date?: string) =>
    json<{ summary: DailySummary }>('GET', '/stats/daily-summary', { query: { date } }).then((r) => r.summary),
  exportRows: (period: PeriodQuery) =>
    json<{ export: { startDate: string; endDate: string; rows: ExportRow[] } }>('GET', '/stats/export', {
      query: { ...period, format: 'json' },
    }).then((r) => r.export),
  downloadExport: (format: 'csv' | 'json' | 'pdf', period: PeriodQuery) =>
    download('/stats/export', { ...period, format }, `warmup-stats.${format}`),

  providers: () => json<{ providers: ProviderPreset[] }>('GET', '/mailboxes/providers').then((r) => r.providers),
  mailboxes: (query: { page?: number; limit?: number; status?: string; q?: string } = {}) =>
    json<{ mailboxes: Mailbox[]; pagination: Pagination }>('GET', '/mailboxes', { query }),
  mailbox: (id: string) =>
    json<{ mailbox: Mailbox }>('GET', `/mailboxes/${encodeURIComponent(id)}`).then((r) => r.mailbox),
  importMailboxes,
  oauthProviders: () =>
    json<{ providers: Array<{ id: OAuthProviderId; name: string }> }>('GET', '/oauth/providers').then(
      (r) => r.providers,
    ),
  /** The provider's consent page for a new mailbox, or to reconnect `mailboxId`. */
  authorizeOAuth: (provider: OAuthProviderId, mailboxId?: string) =>
    json<{ authorization: { authorizationUrl: string } }>('POST', `/oauth/${provider}/authorize`, {
      body: mailboxId ? { mailboxId } : {},
    }).then((r) => r.authorization.authorizationUrl),
  /** A consent of a flow started with an API key, waiting for a member of the workspace to confirm it. */
  pendingOAuthConnection: (flow: string) =>
    json<{ connection: PendingConnect }>('GET', `/oauth/flows/${encodeURIComponent(flow)}`).then((r) => r.connection),
  confirmOAuthConnection: (flow: string) =>
    json<{ mailbox: Mailbox }>('POST', `/oauth/flows/${encodeURIComponent(flow)}/confirm`).then((r) => r.mailbox),
  cancelOAuthConnection: (flow: string) => json<void>('DELETE', `/oauth/flows/${encodeURIComponent(flow)}`),
  createMailbox: (body: MailboxCreate) =>
    json<{ mailbox: Mailbox }>('POST', '/mailboxes', { body }).then((r) => r.mailbox),
  updateMailbox: (id: string, body: MailboxPatch) =>
    json<{ mailbox: Mailbox }>('PATCH', `/mailboxes/${encodeURIComponent(id)}`, { body }).then((r) => r.mailbox),
  deleteMailbox: (id: string) => json<void>('DELETE', `/mailboxes/${encodeURIComponent(id)}`),
  pauseMailbox: (id: string) =>
    json<{ mailbox: Mailbox }>('POST', `/mailboxes/${encodeURIComponent(id)}/pause`).then((r) => r.mailbox),
  resumeMailbox: (id: string) =>
    json<{ mailbox: Mailbox }>('POST', `/mailboxes/${encodeURIComponent(id)}/resume`).then((r) => r.mailbox),
  mailboxStats: (id: string, period: PeriodQuery) =>
    json<{ stats: MailboxStats }>('GET', `/mailboxes/${encodeURIComponent(id)}/stats`, { query: period }).then(
      (r) => r.stats,
    ),
  /** The DNS checks of the mailbox's domain, run now. */
  mailboxChecks: (id: string) => json<MailboxChecks>('GET', `/mailboxes/${encodeURIComponent(id)}/checks`),
  /** Gives (or, with null, forgets) the selector of the domain's DKIM key the checks use. */
  setDkimSelector: (id: string, selector: string | null) =>
    json<{ dkimSelector: DkimSelector }>('PUT', `/mailboxes/${encodeURIComponent(id)}/dkim-selector`, {
      body: { selector },
    }).then((r) => r.dkimSelector),
  /** Every mailbox's DNS and blocklist status from the latest daily run, by address. */
  mailboxDnsStatus: () =>
    json<{ mailboxes: MailboxDnsStatus[] }>('GET', '/mailboxes/dns-status').then((r) => r.mailboxes),
  /** The latest blocklist answers of the daily run. */
  mailboxBlocklists: (id: string) =>
    json<{ blocklists: BlocklistListing[] }>('GET', `/mailboxes/${encodeURIComponent(id)}/blocklists`).then(
      (r) => r.blocklists,
    ),
  placement: (period: PeriodQuery) =>
    json<{ placement: Placement }>('GET', '/stats/placement', { query: period }).then((r) => r.placement),
  mailboxVerdicts: (id: string, period: PeriodQuery) =>
    json<{ verdicts: MailboxVerdicts }>('GET', `/mailboxes/${encodeURIComponent(id)}/verdicts`, {
      query: period,
    }).then((r) => r.verdicts),
  interactions: (id: string, query: { page?: number; limit?: number; type?: string }) =>
    json<{ interactions: Interaction[]; pagination: Pagination }>(
      'GET',
      `/mailboxes/${encodeURIComponent(id)}/interactions`,
      { query },
    ),
  humanReplies: (id: string, query: { page?: number; limit?: number }) =>
    json<{ replies: HumanReply[]; pagination: Pagination }>('GET', `/mailboxes/${encodeURIComponent(id)}/replies`, {
      query,
    }),

  templates: (query: TemplateListQuery) =>
    json<{ templates: Template[]; pagination: Pagination }>('GET', '/templates', { query: { ...query } }),
  template: (id: string) =>
    json<{ template: Template }>('GET', `/templates/${encodeURIComponent(id)}`).then((r) => r.template),
  createTemplate: (body: TemplateFields) =>
    json<{ template: Template }>('POST', '/templates', { body }).then((r) => r.template),
  updateTemplate: (id: string, body: Partial<TemplateFields>) =>
    json<{ template: Template }>('PATCH', `/templates/${encodeURIComponent(id)}`, { body }).then((r) => r.template),
  deleteTemplate: (id: string) => json<void>('DELETE', `/templates/${encodeURIComponent(id)}`),
  duplicateTemplate: (id: string) =>
    json<{ template: Template }>('POST', `/templates/${encodeURIComponent(id)}/duplicate`).then((r) => r.template),
  previewTemplate: (body: { subject: string; body: string; seed?: number; variables?: Record<string, string> }) =>
    json<{ preview: Preview }>('POST', '/templates/preview', { body }).then((r) => r.preview),
  importTemplates: (document: unknown) =>
    json<{ imported: number }>('POST', '/templates/import', { body: document }).then((r) => r.imported),
  exportTemplates: (query: { type?: string; language?: string }) =>
    download('/templates/export', query, 'warmup-templates.json'),
};
