// What an event says to a person: a headline, what happened and what to do about it, in plain
// words. Email, Slack and Teams alerts are all written from this one reading, so they agree. Only
// fields of the event's own payload are used, and a payload never holds a secret (no password, no
// token, no endpoint URL of a chat), so neither does an alert.

export interface AlertEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface AlertMessage {
  /** One line: the mailbox (where there is one) and what happened to it. */
  title: string;
  /** What happened, a sentence or a few. */
  happened: string[];
  /** The one thing to do; null when nothing needs doing. */
  fix: string | null;
}

/** The longest any text of an event may be in an alert: a payload is the engine's, but a reply excerpt is a stranger's. */
const MAX_TEXT = 500;

function text(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const flat = String(value).replace(/\s+/g, ' ').trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT - 1)}…` : flat;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function mailboxOf(data: Record<string, unknown>): string {
  return text(record(data.mailbox).email) ?? 'A mailbox';
}

type Reader = (data: Record<string, unknown>) => AlertMessage;

const READERS: Record<string, Reader> = {
  'mailbox.error': (data) => {
    const mailbox = mailboxOf(data);
    const why = text(data.lastError);
    return {
      title: `${mailbox} stopped warming up`,
      happened: [`Warmup stopped for ${mailbox}: the service could not log in to it or send from it.`],
      fix: why
        ? `${why} Then resume the mailbox on its page in the dashboard.`
        : 'Open the mailbox in the dashboard, check its connection settings, then resume it.',
    };
  },
  'mailbox.recovered': (data) => {
    const mailbox = mailboxOf(data);
    return {
      title: `${mailbox} is warming up again`,
      happened: [`${mailbox} works again and its warmup has resumed where it stopped.`],
      fix: null,
    };
  },
  'mailbox.human_reply': (data) => {
    const mailbox = mailboxOf(data);
    const reply = record(data.reply);
    const from = record(reply.from);
    const who = text(from.name) || text(from.email) || 'Someone';
    const subject = text(reply.subject);
    const excerpt = text(reply.excerpt);
    return {
      title: `${who} wrote to ${mailbox}`,
      happened: [
        `A person (${text(from.email) ?? 'unknown address'}) replied to a warmup conversation of ${mailbox}${subject ? `, subject “${subject}”` : ''}. The service left it unread and stopped that conversation.`,
        ...(excerpt ? [`It begins: “${excerpt}”`] : []),
      ],
      fix: `Read and answer it in ${mailbox}'s inbox; the service will not touch it.`,
    };
  },
  'mailbox.receiver_filtering': (data) => {
    const mailbox = mailboxOf(data);
    const message = text(data.message);
    return {
      title: `${mailbox} files other people's warmup mail into spam`,
      happened: [
        message ??
          `${mailbox} put ${text(data.junkedSenders) ?? 'most'} of ${text(data.senders) ?? 'its'} senders' warmup mail into spam, while other receivers found the same mail in the inbox.`,
      ],
      fix: `Check the spam rules and filters of ${mailbox} (a rule that junks unknown senders, a strict server filter); its senders are not blamed meanwhile.`,
    };
  },
  'reputation.dropped': (data) => {
    const mailbox = mailboxOf(data);
    return {
      title: `${mailbox}'s reputation dropped to ${text(data.reputation) ?? '?'}`,
      happened: [
        `The reputation of ${mailbox} fell from ${text(data.previous) ?? '?'} to ${text(data.reputation) ?? '?'} in a day: more of its mail was found in spam, bounced or lost.`,
      ],
      fix: `Open ${mailbox} in the dashboard: its DNS checks and where its mail was placed show the cause. Lower its daily limit until the score recovers.`,
    };
  },
  'check.failed': (data) => {
    const mailbox = mailboxOf(data);
    const check = text(data.check) ?? 'a';
    const domain = text(data.domain) ?? 'its domain';
    const blocklist = check === 'blocklist';
    return {
      title: blocklist
        ? `${text(data.listed) ?? domain} is on the blocklist ${text(data.zone) ?? ''}`.trim()
        : `The ${check.toUpperCase()} check of ${domain} fails`,
      happened: [
        blocklist
          ? `${text(data.listed) ?? domain}, which ${mailbox} sends from, is listed on ${text(data.zone) ?? 'a blocklist'}.`
          : `The ${check.toUpperCase()} record of ${domain}, the domain of ${mailbox}, fails its check.`,
        ...(text(data.detail) ? [text(data.detail)!] : []),
      ],
      fix: text(data.fix) ?? `Fix the ${check.toUpperCase()} record of ${domain} at your DNS host.`,
    };
  },
  'placement_test.completed': (data) => {
    const test = record(data.placementTest);
    const sender = text(record(test.sender).email) ?? 'a mailbox';
    const totals = record(test.totals);
    const found = ['inbox', 'spam', 'promotions', 'other']
      .map((place) => [place, Number(totals[place] ?? 0)] as const)
      .filter(([, count]) => count > 0)
      .map(([place, count]) => `${count} in ${place}`);
    const spam = Number(totals.spam ?? 0);
    return {
      title: `Placement test of ${sender} finished`,
      happened: [
        `The placement test of ${sender} finished: ${found.length > 0 ? found.join(', ') : 'no copy was found'}.`,
      ],
      fix:
        spam > 0
          ? `Open the test in the dashboard to see which providers filed it as spam, and check ${sender}'s DNS records.`
          : null,
    };
  },
  'domain.provider_signal': (data) => {
    const domain = text(data.domain) ?? 'A domain';
    const held = data.state === 'held';
    return {
      title: held
        ? `A provider reports a problem for ${domain}`
        : `The providers no longer report a problem for ${domain}`,
      happened: [text(data.reason) ?? `The providers' feeds changed their verdict on ${domain}.`],
      fix: held
        ? `Look at what ${domain} sends besides warmup (campaigns, lists): lower the volume, remove unengaged recipients, check SPF, DKIM and DMARC.`
        : null,
    };
  },
  'daily.summary': (data) => {
    const totals = record(data.totals);
    const mailboxes = Array.isArray(data.mailboxes) ? data.mailboxes.map(record) : [];
    const stopped = mailboxes.filter((mailbox) => mailbox.status === 'error').map((mailbox) => text(mailbox.email));
    return {
      title: `Warmup on ${text(data.day) ?? 'yesterday'}: ${Number(totals.sent ?? 0)} sent, ${Number(totals.spam ?? 0)} in spam`,
      happened: [
        `${mailboxes.length} mailboxes sent ${Number(totals.sent ?? 0)} warmup emails; ${Number(totals.inbox ?? 0)} were found in the inbox, ${Number(totals.spam ?? 0)} in spam, ${Number(totals.bounced ?? 0)} bounced.`,
        ...(stopped.length > 0 ? [`Stopped: ${stopped.join(', ')}.`] : []),
      ],
      fix: stopped.length > 0 ? 'Open each stopped mailbox in the dashboard and follow the fix it shows.' : null,
    };
  },
  'webhook.test': () => ({
    title: 'Test alert from Warmup',
    happened: ['This is a test. Alerts from your Warmup workspace will arrive here.'],
    fix: null,
  }),
};

export function describeEvent(event: AlertEvent): AlertMessage {
  const reader = READERS[event.type];
  if (reader) return reader(record(event.data));
  return {
    title: `Warmup event ${text(event.type) ?? ''}`.trim(),
    happened: ['Something happened in your workspace.'],
    fix: null,
  };
}
