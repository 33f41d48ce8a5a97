/*
 * The floors of src/: every folder and root file of src/ has one, lowest first, and code imports
 * only what lies on a lower floor. eslint.config.js generates the layering rule from this table, so
 * a new folder or root file fails the lint until it is placed here.
 *
 * A place is a folder of src/ (its files, not its subfolders: each folder is placed), a single file
 * placed apart from its folder, or a pattern of files. The most specific place wins: a file, then a
 * pattern, then its folder. Places on one floor are independent of each other (an import between
 * two fails), except places in the same folder: blocklists.ts may use dns-resolver.ts beside it.
 *
 * Upward imports are listed in UPWARD_IMPORTS below, each with its reason; any other fails.
 */

/** Lowest first: the index is the floor. Paths are relative to src/. */
export const FLOORS = [
  // Nothing of src/ below them: the clock, the calendar, how a setting is read, the server's build
  // (it runs before any TypeScript loader) and the migrations (history that must not change with
  // the code).
  ['clock.ts', 'calendar.ts', 'settings.ts', 'server-build.mjs', 'db/migrations'],
  ['mail'],
  ['http'],
  // Pure helpers the contract is built from.
  ['accounts/passwords.ts', 'stats/period.ts', 'templates/render.ts'],
  // The conversation generator: pure wording, from its phrase banks alone.
  ['conversations'],
  // The contract: the TypeBox shapes of the API, which the table types and the dashboard speak too.
  ['*/*.schemas.ts'],
  // What config.ts reads its settings with, so that every module may take the config.
  ['checks/dns-resolver.ts', 'checks/blocklists.ts', 'oauth/oauth.config.ts', 'alerts/alerts.config.ts'],
  ['oidc/oidc.config.ts'],
  ['config.ts'],
  ['db', 'secrets', 'startup-errors.ts'],
  // The job runtime (scheduler, leases, concurrency); the tables (and view) of placement tests and
  // the webhook delivery table, which the engine's placement runs write; the providers' token
  // endpoints, which mailboxes and sign-in both call.
  [
    'jobs',
    'interactions',
    'workspaces',
    'templates',
    'verdicts',
    'placement-tests/placement-tests.repository.ts',
    'placement-tests/placement-test-view.ts',
    'webhooks/webhooks.repository.ts',
    'oauth/oauth.client.ts',
    // how a feed's connection is stored: the routes and the OAuth flow that ends in a Postmaster connection
    'feeds/feed-connections.repository.ts',
  ],
  // peers: installations that warm each other's mailboxes, over a signed protocol of their own.
  ['accounts', 'mailboxes', 'peers'],
  // alerts: how an event reads as an email, a Slack or a Teams message, and the email alert's settings.
  ['checks', 'oauth', 'engine', 'alerts'],
  // dmarc: the providers' aggregate reports, read from a mailbox of the workspace by a job (engine's deps).
  // peer-mail: the mail between peers, which the engine's repositories record.
  ['webhooks', 'oidc', 'doctor.ts', 'dmarc', 'peers/peer-mail.ts', 'peers/peer-mail.routes.ts'],
  // feeds: the providers' own feeds (SNDS, Postmaster Tools), fetched by a job; their rules are the engine's.
  ['feeds'],
  // The one list of jobs, built from the modules that run them (metrics reads its steps).
  // alerts' service and routes show the webhooks' view of a Slack or Teams destination.
  ['placement-tests', 'jobs/job-list.ts', 'alerts/alerts.service.ts', 'alerts/alerts.routes.ts'],
  ['stats', 'metrics'],
  // The dashboard is the browser's program: above every server module, so that none imports it
  // (app.ts serves it); its pages stand on its components.
  ['dashboard'],
  ['dashboard/components'],
  ['dashboard/pages'],
  ['dashboard/app.tsx'],
  ['dashboard/main.tsx'],
  ['services.ts'],
  ['app.ts'],
  ['main.ts'],
  ['cli.ts'],
];

/**
 * The imports allowed to point up, importer -> target (paths from the repository root), each with
 * its reason. At most three stay for good.
 */
export const UPWARD_IMPORTS = [
  {
    from: 'src/mailboxes/mailboxes.service.ts',
    to: 'src/oauth/oauth.tokens.ts',
    reason:
      "A mailbox signed in with OAuth is tested with a fresh access token; the token store marks the mailbox's state when a refresh fails.",
  },
  {
    from: 'src/mailboxes/mailbox-state.ts',
    to: 'src/webhooks/webhook-events.ts',
    reason:
      "A mailbox's new status and the webhook event it makes (mailbox.error, mailbox.recovered) commit in one transaction.",
  },
];

const patternOf = (glob) => new RegExp(`^${glob.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`);
const PLACES = FLOORS.flatMap((places, floor) =>
  places.map((place) => {
    const kind = place.includes('*') ? 'pattern' : /\.[cm]?[jt]sx?$/.test(place) ? 'file' : 'folder';
    const folder = kind === 'folder' ? place : place.split('/').slice(0, -1).join('/');
    return { place, floor, kind, folder, pattern: kind === 'pattern' ? patternOf(place) : null };
  }),
);
const withoutExtension = (path) => path.replace(/\.(d\.)?[cm]?[jt]sx?$/, '');

/**
 * The place of a source file, its path relative to src/ (an import's `.js` names its `.ts` file),
 * or undefined when it has none.
 */
export function placeOf(path) {
  const bare = withoutExtension(path);
  const file = PLACES.find((p) => p.kind === 'file' && withoutExtension(p.place) === bare);
  if (file) return file;
  const pattern = PLACES.find((p) => p.kind === 'pattern' && p.pattern.test(`${bare}.ts`));
  if (pattern) return pattern;
  const folder = path.split('/').slice(0, -1).join('/');
  return PLACES.find((p) => p.kind === 'folder' && p.place === folder);
}
