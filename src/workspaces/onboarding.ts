import type { OnboardingFacts } from './onboarding.repository.js';
import type { OnboardingStep } from './workspaces.schemas.js';

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The checklist's steps from the workspace's facts. Two domains, because warmup between mailboxes of
 * one domain teaches providers little; DNS counts only once every mailbox has been checked, so a
 * workspace is never told its DNS is fine before anyone looked.
 */
export function onboardingSteps(facts: OnboardingFacts): OnboardingStep[] {
  const dnsProblems = facts.failingDnsChecks + facts.blocklistListings;
  const dnsDetail =
    facts.mailboxes === 0
      ? 'Nothing to check until a mailbox is connected'
      : dnsProblems > 0
        ? [
            facts.failingDnsChecks > 0 && plural(facts.failingDnsChecks, 'failing DNS check', 'failing DNS checks'),
            facts.blocklistListings > 0 && plural(facts.blocklistListings, 'blocklist listing', 'blocklist listings'),
          ]
            .filter((part): part is string => typeof part === 'string')
            .join(' and ')
        : facts.uncheckedMailboxes > 0
          ? `${plural(facts.uncheckedMailboxes, 'mailbox', 'mailboxes')} not checked yet`
          : `MX, SPF, DKIM and DMARC pass and no blocklist lists ${facts.domains.length === 1 ? 'your domain' : 'your domains'}`;
  return [
    {
      id: 'mailboxes',
      done: facts.domains.length >= 2,
      detail:
        facts.mailboxes === 0
          ? 'No mailbox connected yet'
          : `${plural(facts.mailboxes, 'mailbox', 'mailboxes')} on ${plural(facts.domains.length, 'domain', 'domains')}`,
    },
    { id: 'dns', done: facts.mailboxes > 0 && facts.uncheckedMailboxes === 0 && dnsProblems === 0, detail: dnsDetail },
    {
      id: 'team',
      done: facts.members >= 2 || facts.pendingInvites > 0,
      detail:
        facts.pendingInvites > 0
          ? `${plural(facts.pendingInvites, 'invite', 'invites')} waiting to be accepted`
          : facts.members >= 2
            ? plural(facts.members, 'member', 'members')
            : 'Nobody else invited yet',
    },
    {
      id: 'alerts',
      done: facts.enabledAlerts > 0,
      detail:
        facts.enabledAlerts > 0 ? plural(facts.enabledAlerts, 'alert set up', 'alerts set up') : 'No alert set up yet',
    },
  ];
}
