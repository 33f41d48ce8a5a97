// The mailboxes of the one mail stack a test run starts (see test/global-setup.ts).
// Suites run in parallel worker processes against that single stack, so each suite
// owns its own mailboxes: a suite only ever logs in as, sends from or reads the
// users of its own key. Add a key (and users) for a new suite instead of borrowing.

export interface MailUser {
  email: string;
  password: string;
}

const user = (email: string): MailUser => ({ email, password: `${email.split('@')[0]}-pass-123` });

export const MAIL_USERS = {
  /** src/mail tests (the SMTP/IMAP layer itself). */
  mail: [
    user('ann@mail-alpha.test'),
    user('ben@mail-beta.test'),
    user('cody@mail-gamma.test'),
    user('dina@mail-alpha.test'),
    user('spammer@mail-junk.test'),
  ],
  /** Each client's MIME delivered, the EHLO name and the connection check as ordinary mail (engine/client-delivery.test.ts). */
  clients: [user('mona@mime-one.test'), user('otto@mime-two.test')],
  /** Mailbox routes/service: 6 users on 3 domains. */
  mailboxes: [
    user('alice@alpha.test'),
    user('amy@alpha.test'),
    user('bob@beta.test'),
    user('bella@beta.test'),
    user('carol@gamma.test'),
    user('chris@gamma.test'),
  ],
  /** Engine end-to-end: 6 users on 5 domains; junky@delta.test is a junk sender. */
  engine: [
    user('erin@echo.test'),
    user('frank@foxtrot.test'),
    user('grace@golf.test'),
    user('hank@hotel.test'),
    user('ivy@echo.test'),
    user('junky@delta.test'),
  ],
  /** Three peered installations (src/peers/peer-mail.test.ts): two users each, on each one's own domain. */
  peering: [
    user('ada@peer-alpha.test'),
    user('abe@peer-alpha.test'),
    user('bea@peer-bravo.test'),
    user('bud@peer-bravo.test'),
    user('cal@peer-charlie.test'),
    user('cid@peer-charlie.test'),
  ],
  /** Engine multi-day simulation: 12 users on 4 domains, enough partners for a visible ramp under the 3-in-7 rule. */
  engineSim: [
    user('kate@kilo.test'),
    user('liam@lima.test'),
    user('mia@mike.test'),
    user('noah@november.test'),
    user('olga@kilo.test'),
    user('pete@lima.test'),
    user('quinn@mike.test'),
    user('rosa@november.test'),
    user('sam@kilo.test'),
    user('tara@lima.test'),
    user('uma@mike.test'),
    user('vic@november.test'),
  ],
  /** Send bounds end to end (late start, pause/resume, a day of downtime): 4 users on 4 domains. */
  bounds: [
    user('ali@bounds-one.test'),
    user('bo@bounds-two.test'),
    user('cy@bounds-three.test'),
    user('di@bounds-four.test'),
  ],
  /** Many-mailbox run: 10 users on 5 domains. */
  scale: [
    user('s01@scale-one.test'),
    user('s02@scale-one.test'),
    user('s03@scale-two.test'),
    user('s04@scale-two.test'),
    user('s05@scale-three.test'),
    user('s06@scale-three.test'),
    user('s07@scale-four.test'),
    user('s08@scale-four.test'),
    user('s09@scale-five.test'),
    user('s10@scale-five.test'),
  ],
  /**
   * The hostile-tenant attack (test/security): a victim workspace's two mailboxes, a hostile
   * workspace's receiver that junks everything and one that deletes everything foreign, and an
   * address the hostile workspace claims without receiving its mail.
   */
  hostile: [
    user('vera@victor.test'),
    user('wade@whiskey.test'),
    user('xena@xray.test'),
    user('yuri@yankee.test'),
    user('zoe@zulu.test'),
  ],
  /**
   * Sybil workspaces (test/security/sybil.pool.test.ts): a victim workspace's two mailboxes and three
   * receivers, each on its own domain, whose server files everything into spam.
   */
  sybil: [
    user('sia@sybil-victim-one.test'),
    user('sol@sybil-victim-two.test'),
    user('jan@sybil-junk-one.test'),
    user('jon@sybil-junk-two.test'),
    user('jay@sybil-junk-three.test'),
  ],
  /** People differ (engine end to end): two mailboxes and a junk sender, each acting in its own time. */
  people: [user('pia@people-one.test'), user('rex@people-two.test'), user('sly@people-junk.test')],
  /**
   * The real culprit (test/engine/culprit-e2e.test.ts): three healthy mailboxes, a receiver whose
   * server files everything into Junk (eve) and a sender whose mail always lands in Junk (jed), each
   * on its own domain.
   */
  culprit: [
    user('abe@culprit-one.test'),
    user('bea@culprit-two.test'),
    user('cal@culprit-three.test'),
    user('eve@culprit-filter.test'),
    user('jed@culprit-junk.test'),
  ],
  /** Bulk import of mailboxes (CSV): 4 users on 2 domains. */
  mailboxImport: [
    user('ivan@import-one.test'),
    user('iris@import-one.test'),
    user('ida@import-two.test'),
    user('igor@import-two.test'),
  ],
  /** The dashboard's import page in the browser: 2 users. */
  dashboardImport: [user('dora@import-page.test'), user('dirk@import-page.test')],
  /** Dashboard browser tests: 3 users. */
  dashboard: [user('olive@oscar.test'), user('paul@papa.test'), user('quinn@quebec.test')],
  /** Hostile-tenant tests of the mail layer (test/security): their own mailboxes. */
  securityMail: [user('tess@tango.test'), user('uri@uniform.test')],
  /** Metrics, webhooks and DNS checks (src/metrics, src/webhooks, src/checks): mike@metrics-junk.test is a junk sender. */
  deliverability: [user('mona@metrics-one.test'), user('max@metrics-two.test'), user('mike@metrics-junk.test')],
  /** Placement tests (src/placement-tests): a sender and three seeds on their own domains; dot's server drops foreign mail. */
  placement: [
    user('sam@placement-send.test'),
    user('gina@placement-one.test'),
    user('otto@placement-two.test'),
    user('dot@placement-drop.test'),
  ],
  /** Receiver verdicts from another workspace (src/verdicts): a sender, a receiver of its own workspace, a hostile one. */
  verdictTrust: [user('val@verdict-victim.test'), user('tim@verdict-team.test'), user('hugo@verdict-hostile.test')],
  /**
   * Gmail placement end to end (test/engine/gmail-e2e.test.ts): gwen reads her mail on the Gmail-like
   * IMAP server the test relays her deliveries into; the others are ordinary stack mailboxes whose
   * mail Gmail files into Primary (gus), Promotions (pam), Updates (uli) or Spam (sid).
   */
  gmail: [
    user('gwen@gmail-like.test'),
    user('gus@gm-primary.test'),
    user('pam@gm-promotions.test'),
    user('uli@gm-updates.test'),
    user('sid@gm-spam.test'),
  ],
  /**
   * Email alerts (src/alerts): the operator's account that sends them, and a workspace's owner,
   * admin and viewer (only the first two are mailed); and the owner of the retry test.
   */
  alerts: [
    user('notices@alert-ops.test'),
    user('olive@alert-team.test'),
    user('adam@alert-team.test'),
    user('vera@alert-team.test'),
    user('rita@alert-team.test'),
  ],
  /** DMARC aggregate reports (src/dmarc): the `rua` mailboxes of two workspaces. */
  dmarc: [user('rua@dmarc-one.test'), user('rua@dmarc-two.test')],
  /** Benchmarks: 8 users on 4 domains, none of them a junk sender. */
  bench: [
    user('b1@bench-one.test'),
    user('b2@bench-one.test'),
    user('b3@bench-two.test'),
    user('b4@bench-two.test'),
    user('b5@bench-three.test'),
    user('b6@bench-three.test'),
    user('b7@bench-four.test'),
    user('b8@bench-four.test'),
  ],
  /** The workers benchmark with latency: 24 senders on 6 domains, so three workers find enough to do at once. */
  benchWide: ['one', 'two', 'three', 'four', 'five', 'six'].flatMap((domain) =>
    [1, 2, 3, 4].map((n) => user(`wide${n}@bench-wide-${domain}.test`)),
  ),
} as const satisfies Record<string, readonly MailUser[]>;

export type MailUserSuite = keyof typeof MAIL_USERS;

/** Senders whose mail the stack's Sieve script files into the recipient's Junk folder. */
export const JUNK_SENDERS: readonly string[] = [
  'junky@delta.test',
  'spammer@mail-junk.test',
  'sly@people-junk.test',
  'mike@metrics-junk.test',
  'jed@culprit-junk.test',
];

/** Mail whose subject holds this phrase is filed into the recipient's Junk folder (the stack's Sieve script). */
export const JUNK_PHRASE = 'Act now, limited offer';

/** Receivers whose server files everything they receive into Junk. */
export const JUNK_RECIPIENTS: readonly string[] = [
  'xena@xray.test',
  'jan@sybil-junk-one.test',
  'jon@sybil-junk-two.test',
  'jay@sybil-junk-three.test',
  'eve@culprit-filter.test',
];

/** Receivers whose server drops everything they receive from anyone but themselves. */
export const DISCARD_RECIPIENTS: readonly string[] = ['yuri@yankee.test', 'dot@placement-drop.test'];

/** Every user of every suite, the list the stack is started with. */
export const ALL_MAIL_USERS: readonly MailUser[] = Object.values(MAIL_USERS).flat();
