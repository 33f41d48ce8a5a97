import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const { Document, Spectral } = spectralCore;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let t: TestApp;
let document: string;

beforeAll(async () => {
  t = await createTestApp();
  const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.body;
});

afterAll(async () => {
  await t.close();
});

describe('GET /openapi.json', () => {
  it("passes Spectral's spectral:oas ruleset with no result of any severity", async () => {
    const spectral = new Spectral();
    // The package types `oas` as a plain object literal, which misses the definition's union type.
    spectral.setRuleset(oas as RulesetDefinition);
    const results = await spectral.run(new Document(document, Json, '/openapi.json'));
    const found = results.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
    expect(found).toEqual([]);
  });

  it('names every operation with a stable operationId, and every collection without a trailing slash', () => {
    const paths = JSON.parse(document).paths as Record<string, Record<string, { operationId?: string }>>;
    const operations = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => HTTP_METHODS.includes(method))
        .map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );
    // Generated clients name their functions after these: renaming one is a breaking change.
    expect(operations.sort()).toEqual(
      [
        'GET /api/workspace getWorkspace',
        'GET /api/workspace/settings getWorkspaceSettings',
        'GET /api/workspace/onboarding getWorkspaceOnboarding',
        'PATCH /api/workspace/settings updateWorkspaceSettings',
        'GET /api/keys listApiKeys',
        'POST /api/keys createApiKey',
        'DELETE /api/keys/{id} revokeApiKey',
        'POST /api/keys/{id}/reissue reissueApiKey',
        'GET /api/templates listTemplates',
        'POST /api/templates createTemplate',
        'GET /api/templates/export exportTemplates',
        'POST /api/templates/import importTemplates',
        'POST /api/templates/preview previewUnsavedTemplate',
        'GET /api/templates/{id} getTemplate',
        'PATCH /api/templates/{id} updateTemplate',
        'PUT /api/templates/{id} replaceTemplate',
        'DELETE /api/templates/{id} deleteTemplate',
        'POST /api/templates/{id}/duplicate duplicateTemplate',
        'POST /api/templates/{id}/preview previewTemplate',
        'GET /api/mailboxes/providers listProviders',
        'GET /api/mailboxes listMailboxes',
        'POST /api/mailboxes createMailbox',
        'POST /api/mailboxes/import importMailboxes',
        'POST /api/oauth/{provider}/authorize authorizeOAuthMailbox',
        'GET /api/oauth/providers listOAuthProviders',
        'GET /api/oauth/flows/{id} getPendingOAuthConnection',
        'POST /api/oauth/flows/{id}/confirm confirmOAuthConnection',
        'DELETE /api/oauth/flows/{id} cancelOAuthConnection',
        'GET /oauth/callback oauthCallback',
        'GET /api/mailboxes/{id} getMailbox',
        'PATCH /api/mailboxes/{id} updateMailbox',
        'DELETE /api/mailboxes/{id} deleteMailbox',
        'POST /api/mailboxes/{id}/pause pauseMailbox',
        'POST /api/mailboxes/{id}/resume resumeMailbox',
        'GET /api/mailboxes/{id}/interactions listMailboxInteractions',
        'GET /api/mailboxes/{id}/replies listMailboxHumanReplies',
        'GET /api/mailboxes/{id}/stats getMailboxStats',
        'GET /api/stats/dashboard getDashboardStats',
        'GET /api/stats/analytics getAnalytics',
        'GET /api/stats/reputation getReputationHistory',
        'GET /api/stats/placement getPlacementStats',
        'GET /api/stats/engagement getEngagementStats',
        'GET /api/stats/export exportStats',
        'GET /api/stats/daily-summary getDailySummary',
        'GET /api/mailboxes/dns-status listMailboxDnsStatus',
        'GET /api/mailboxes/{id}/checks getMailboxChecks',
        'GET /api/mailboxes/{id}/blocklists getMailboxBlocklists',
        'PUT /api/mailboxes/{id}/dkim-selector setMailboxDkimSelector',
        'GET /api/mailboxes/{id}/verdicts getMailboxVerdicts',
        'GET /api/webhooks listWebhooks',
        'POST /api/webhooks createWebhook',
        'GET /api/webhooks/{id} getWebhook',
        'PATCH /api/webhooks/{id} updateWebhook',
        'DELETE /api/webhooks/{id} deleteWebhook',
        'POST /api/webhooks/{id}/rotate-secret rotateWebhookSecret',
        'POST /api/webhooks/{id}/test testWebhook',
        'GET /api/webhooks/{id}/deliveries listWebhookDeliveries',
        'GET /api/alerts getAlerts',
        'PUT /api/alerts/email setEmailAlerts',
        'POST /api/alerts/email/test testEmailAlerts',
        'GET /api/dmarc/source getDmarcSource',
        'PUT /api/dmarc/source setDmarcSource',
        'DELETE /api/dmarc/source deleteDmarcSource',
        'GET /api/dmarc/domains listDmarcDomains',
        'GET /api/dmarc/domains/{domain} getDmarcDomain',
        'GET /api/feeds/snds getSndsFeed',
        'DELETE /api/feeds/snds deleteSndsFeed',
        'GET /api/feeds/postmaster getPostmasterFeed',
        'DELETE /api/feeds/postmaster deletePostmasterFeed',
        'PUT /api/feeds/snds setSndsFeed',
        'PUT /api/feeds/postmaster setPostmasterFeed',
        'POST /api/feeds/postmaster/authorize authorizePostmasterFeed',
        'GET /api/feeds/domains/{domain} getProviderVerdicts',
        'GET /api/peers/identity getPeerIdentity',
        'GET /api/peers listPeers',
        'POST /api/peers addPeer',
        'POST /api/peers/{id}/pause pausePeer',
        'POST /api/peers/{id}/resume resumePeer',
        'DELETE /api/peers/{id} removePeer',
        'POST /peer/v1/hello peerHello',
        'GET /peer/v1/offer peerOffer',
        'POST /peer/v1/messages peerAnnounceMessages',
        'POST /peer/v1/evidence peerReportEvidence',
        'GET /api/setup getSetupStatus',
        'POST /api/setup setUp',
        'POST /api/session signIn',
        'GET /api/session getSession',
        'DELETE /api/session signOut',
        'POST /api/session/sign-out-everywhere signOutEverywhere',
        'PUT /api/session/workspace switchWorkspace',
        'GET /api/session/oidc getOidcSignIn',
        'GET /api/session/oidc/start startOidcSignIn',
        'GET /api/session/oidc/callback finishOidcSignIn',
        'POST /api/account/password changePassword',
        'POST /api/workspaces createWorkspace',
        'GET /api/workspace/members listMembers',
        'GET /api/workspace/members/{userId}/access getMemberAccess',
        'PATCH /api/workspace/members/{userId} updateMember',
        'DELETE /api/workspace/members/{userId} removeMember',
        'POST /api/workspace/invites createInvite',
        'GET /api/workspace/invites listInvites',
        'DELETE /api/workspace/invites/{id} revokeInvite',
        'GET /api/invites/{token} getInvite',
        'POST /api/invites/{token}/accept acceptInvite',
        'GET /api/placement-tests listPlacementTests',
        'POST /api/placement-tests createPlacementTest',
        'GET /api/placement-tests/{id} getPlacementTest',
      ].sort(),
    );
  });

  it('serves the collections at the documented paths, without a trailing slash', async () => {
    for (const url of ['/api/templates', '/api/mailboxes', '/api/workspace', '/api/keys']) {
      const response = await t.workspace.request({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
    }
  });

  it('generates TypeScript types with openapi-typescript that compile', async () => {
    const source = astToString(await openapiTS(document));
    expect(source).toContain('listTemplates: {');
    expect(source).toContain('createMailbox: {');
    const file = ts.createSourceFile('warmup-api.d.ts', source, ts.ScriptTarget.ES2022, true);
    const host = ts.createCompilerHost({});
    const original = host.getSourceFile;
    host.getSourceFile = (name, ...rest) => (name === 'warmup-api.d.ts' ? file : original(name, ...rest));
    const options = { strict: true, noEmit: true, types: [], skipLibCheck: true, lib: ['lib.es2022.d.ts'] };
    const program = ts.createProgram(['warmup-api.d.ts'], options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
  });
});
