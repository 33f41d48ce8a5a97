import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as engine from './002-engine.js';
import * as placementByReceiver from './003-placement-by-receiver.js';
import * as apiKeys from './004-api-keys.js';
import * as mailboxRetries from './005-mailbox-retries.js';
import * as poolTrust from './006-pool-trust.js';
import * as sendBounds from './007-send-bounds.js';
import * as handsOff from './008-hands-off.js';
import * as engagementPlan from './009-engagement-plan.js';
import * as planOutlook from './010-plan-outlook.js';
import * as oauth from './011-oauth.js';
import * as webhooks from './012-webhooks.js';
import * as accounts from './013-accounts.js';
import * as deliverabilityChecks from './014-deliverability-checks.js';
import * as workspaceRollup from './015-workspace-rollup.js';
import * as receiverVerdicts from './016-receiver-verdicts.js';
import * as activeSince from './017-active-since.js';
import * as placementTests from './019-placement-tests.js';
import * as oidcSignIn from './020-oidc-sign-in.js';
import * as placementVerdicts from './021-placement-verdicts.js';
import * as gmailTabs from './022-gmail-tabs.js';
import * as workClaims from './023-work-claims.js';
import * as retention from './024-retention.js';
import * as signInFailures from './025-sign-in-failures.js';
import * as planInbound from './026-plan-inbound.js';
import * as promotedToPrimary from './027-promoted-to-primary.js';
import * as planDue from './028-plan-due.js';
import * as senderClaims from './029-sender-claims.js';
import * as statsCoveringIndexes from './030-stats-covering-indexes.js';
import * as accessProvenance from './031-access-provenance.js';
import * as receiverServers from './032-receiver-servers.js';
import * as oauthPendingConfirmation from './033-oauth-pending-confirmation.js';
import * as humanReplies from './034-human-replies.js';
import * as receiverFiltering from './035-receiver-filtering.js';
import * as planCapacity from './036-plan-capacity.js';
import * as mailboxStopAndLift from './037-mailbox-stop-and-lift.js';
import * as alertDestinations from './038-alert-destinations.js';
import * as onboardingDismissed from './039-onboarding-dismissed.js';
import * as dmarcReports from './040-dmarc-reports.js';
import * as alertMailRecipients from './041-alert-mail-recipients.js';
import * as providerFeeds from './042-provider-feeds.js';
import * as peers from './043-peers.js';
import * as dmarcUnnamedSources from './044-dmarc-unnamed-sources.js';
import * as peerMail from './045-peer-mail.js';

/** Migrations in order; new ones are appended with the next number. */
const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-engine': engine,
  '003-placement-by-receiver': placementByReceiver,
  '004-api-keys': apiKeys,
  '005-mailbox-retries': mailboxRetries,
  '006-pool-trust': poolTrust,
  '007-send-bounds': sendBounds,
  '008-hands-off': handsOff,
  '009-engagement-plan': engagementPlan,
  '010-plan-outlook': planOutlook,
  '011-oauth': oauth,
  '012-webhooks': webhooks,
  '013-accounts': accounts,
  '014-deliverability-checks': deliverabilityChecks,
  '015-workspace-rollup': workspaceRollup,
  '016-receiver-verdicts': receiverVerdicts,
  '017-active-since': activeSince,
  '019-placement-tests': placementTests,
  '020-oidc-sign-in': oidcSignIn,
  '021-placement-verdicts': placementVerdicts,
  '022-gmail-tabs': gmailTabs,
  '023-work-claims': workClaims,
  '024-retention': retention,
  '025-sign-in-failures': signInFailures,
  '026-plan-inbound': planInbound,
  '027-promoted-to-primary': promotedToPrimary,
  '028-plan-due': planDue,
  '029-sender-claims': senderClaims,
  '030-stats-covering-indexes': statsCoveringIndexes,
  '031-access-provenance': accessProvenance,
  '032-receiver-servers': receiverServers,
  '033-oauth-pending-confirmation': oauthPendingConfirmation,
  '034-human-replies': humanReplies,
  '035-receiver-filtering': receiverFiltering,
  '036-plan-capacity': planCapacity,
  '037-mailbox-stop-and-lift': mailboxStopAndLift,
  '038-alert-destinations': alertDestinations,
  '039-onboarding-dismissed': onboardingDismissed,
  '040-dmarc-reports': dmarcReports,
  '041-alert-mail-recipients': alertMailRecipients,
  '042-provider-feeds': providerFeeds,
  '043-peers': peers,
  '044-dmarc-unnamed-sources': dmarcUnnamedSources,
  '045-peer-mail': peerMail,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
