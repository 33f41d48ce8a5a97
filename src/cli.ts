import { Value } from '@sinclair/typebox/value';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from './config.js';
import {
  closeOnSignals,
  createEngineFor,
  createLogger,
  openMigratedDatabase,
  openRuntime,
  startServer,
} from './main.js';
import { fixedClock, systemClock } from './clock.js';
import type { EngineSettings } from './engine/engine-deps.js';
import { runOnce } from './jobs/job-list.js';
import { formatChecks, hasFailure, runDoctor } from './doctor.js';
import { createMetrics } from './metrics/metrics.js';
import { listenForMetrics } from './metrics/metrics.routes.js';
import type { Services } from './services.js';
import { AppError, NotFoundError } from './http/errors.js';
import { describeStartupFailure, StartupError } from './startup-errors.js';
import { KEY_ROLES, ROLES, type KeyRole, type Role } from './http/access.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './accounts/passwords.js';
import { CreatePeerBody } from './peers/peers.schemas.js';

function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** What the engine takes from the configuration. */
function engineSettings(settings: Config): Partial<EngineSettings> {
  return { warmupFolderRetentionDays: settings.warmupFolderRetentionDays, retentionDays: settings.retentionDays };
}

/** The settings of this run once loaded: the failure report below needs their paths and log level. */
let loaded: Config | undefined;

function config(): Config {
  try {
    loaded = loadConfig();
    return loaded;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`warmup: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** An ISO 8601 date-time (or date), or null when it is not one. */
function parseInstant(text: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** A whole number of milliseconds for an option, from 100 ms to a day. */
function milliseconds(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 100 || value > 86_400_000)
    throw new InvalidArgumentError('must be a whole number of milliseconds from 100 to 86400000');
  return value;
}

const program = new Command('warmup').description('Self-hosted email warmup service').showHelpAfterError();

program
  .command('serve')
  .description('serve the API and dashboard, and run every background job (the job list) in the same process')
  .option(
    '--no-engine',
    'serve the API and dashboard only, and run no background job (scale-out API replica; cron mode)',
  )
  .action(async (options: { engine: boolean }) => {
    const settings = config();
    const logger = createLogger(settings);
    const server = await startServer(settings, logger);
    const engine = options.engine
      ? createEngineFor(
          { ...server, logger, clock: systemClock, config: settings },
          {
            onStep: server.metrics.observeStep,
            onCycle: server.metrics.observeCycle,
            settings: engineSettings(settings),
          },
        )
      : undefined;
    engine?.start();
    if (engine) logger.info({ workerId: engine.deps.workerId }, 'warmup engine started');
    // The jobs first: they give their claims back, which needs the database.
    closeOnSignals(logger, async () => {
      await engine?.stop();
      await server.close();
    });
  });

program
  .command('worker')
  .description(
    'run every background job (the job list) without the API (scale-out: any number of workers on one PostgreSQL database)',
  )
  .option('--interval <ms>', 'pause between engine cycles (default 120000)', milliseconds)
  .option(
    '--lease <ms>',
    "how long a claim holds before another worker may take over a dead worker's work (default 300000)",
    milliseconds,
  )
  .option('--ignore-schedule', 'every cycle treats everything planned for the day as due now (tests, benchmarks)')
  .action(async (options: { interval?: number; lease?: number; ignoreSchedule?: boolean }) => {
    const settings = config();
    const logger = createLogger(settings);
    const runtime = await openRuntime(settings, systemClock, logger);
    const { database } = runtime;
    const metrics = createMetrics({ db: database.db, clock: systemClock });
    const engine = createEngineFor(
      { ...runtime, logger, config: settings },
      {
        onStep: metrics.observeStep,
        onCycle: metrics.observeCycle,
        intervalMs: options.interval,
        ignoreSchedule: options.ignoreSchedule,
        settings: { ...engineSettings(settings), ...(options.lease ? { leaseMs: options.lease } : {}) },
        webhookSettings: options.lease ? { leaseMs: options.lease } : {},
      },
    );
    const metricsServer =
      settings.metricsToken && settings.metricsPort
        ? await listenForMetrics(metrics, {
            token: settings.metricsToken,
            port: settings.metricsPort,
            host: settings.host,
          })
        : undefined;
    engine.start();
    logger.info(
      { workerId: engine.deps.workerId },
      `warmup worker started (${database.dialect === 'sqlite' ? 'SQLite: run no other engine on this database' : 'PostgreSQL'})`,
    );
    closeOnSignals(logger, async () => {
      metricsServer?.close();
      await engine.stop();
      await database.close();
    });
  });

program
  .command('run-once')
  .description(
    'run every background job once (engine steps, scheduled events, daily checks, webhook delivery), print a JSON summary and exit',
  )
  .option('--at <time>', 'business time of the cycle, ISO 8601 (default: now)')
  .option(
    '--ignore-schedule',
    'everything planned for the day is due now: sends outside the window, no reading delays, replies in the same cycle',
  )
  .action(async (options: { at?: string; ignoreSchedule?: boolean }) => {
    const at = options.at === undefined ? undefined : parseInstant(options.at);
    if (at === null) {
      process.stderr.write(`warmup: --at must be an ISO 8601 time such as 2025-03-03T10:00:00Z, got "${options.at}"\n`);
      process.exit(2);
    }
    const settings = config();
    const logger = createLogger(settings, { stderr: true });
    const runtime = await openRuntime(settings, at ? fixedClock(at) : systemClock, logger);
    const { database } = runtime;
    const engine = createEngineFor({ ...runtime, logger, config: settings }, { settings: engineSettings(settings) });
    // A signal lets the running step finish, skips the rest and gives the leases back.
    const stop = (): void => void engine.stop();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    try {
      const summary = await runOnce(engine, { at, ignoreSchedule: options.ignoreSchedule ?? false });
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      if (summary.errors.length > 0) process.exitCode = 1;
    } finally {
      await database.close();
    }
  });

program
  .command('doctor')
  .description('check settings, database, secret key, clock and mail servers, and print what to fix')
  .option('--json', 'print the checks as JSON')
  .action(async (options: { json?: boolean }) => {
    const checks = await runDoctor(config(), process.env);
    process.stdout.write(`${options.json ? JSON.stringify({ checks }) : formatChecks(checks)}\n`);
    if (hasFailure(checks)) process.exitCode = 1;
  });

program
  .command('migrate')
  .description('bring the database schema up to date and exit')
  .action(async () => {
    const database = await openMigratedDatabase(config());
    await database.close();
    process.stdout.write('{"migrated":true}\n');
  });

const workspace = program.command('workspace').description('manage workspaces');
workspace
  .command('create <name>')
  .description('create a workspace and print it with its API key (shown only once) as JSON')
  .action(async (name: string) => {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 200) {
      process.stderr.write('warmup: the workspace name must be 1..200 characters\n');
      process.exit(2);
    }
    const settings = config();
    const { database, services } = await openRuntime(settings);
    try {
      const created = await services.workspaces.createWorkspace(trimmed);
      process.stdout.write(`${JSON.stringify(created)}\n`);
    } finally {
      await database.close();
    }
  });

// `warmup key`: the API keys of one workspace, the same operations as /api/keys.
const key = program.command('key').description("manage a workspace's API keys (JSON output)");
function withWorkspaceServices<T>(run: (workspaces: Services['workspaces']) => Promise<T>): Promise<void> {
  return withServices((services) => run(services.workspaces));
}
/** Runs a command against the services and prints its JSON; a refused input is one line on stderr. */
function withServices<T>(run: (services: Services) => Promise<T>): Promise<void> {
  return (async () => {
    const { database, services } = await openRuntime(config());
    try {
      const output = await run(services);
      process.stdout.write(`${JSON.stringify(output)}\n`);
    } catch (error) {
      // Not found, the last key, the key quota: one line on stderr, like any other bad input.
      if (!(error instanceof AppError)) throw error;
      process.stderr.write(`warmup: ${error.message}\n`);
      process.exitCode = 2;
    } finally {
      await database.close();
    }
  })();
}
async function existingWorkspace(workspaces: Services['workspaces'], id: string): Promise<string> {
  if (!(await workspaces.findWorkspace(id))) throw new NotFoundError(`workspace ${id} not found`);
  return id;
}
const workspaceOption = [
  '--workspace <id>',
  'the workspace (as printed by `workspace create`; the bootstrap workspace is ws_default)',
] as const;
key
  .command('list')
  .description('list the keys of a workspace: name, prefix, created, last used (never a key)')
  .requiredOption(...workspaceOption)
  .action((options: { workspace: string }) =>
    withWorkspaceServices(async (workspaces) => ({
      keys: await workspaces.listApiKeys(await existingWorkspace(workspaces, options.workspace)),
    })),
  );
key
  .command('create <name>')
  .description('create a key and print it (shown only once) as JSON')
  .requiredOption(...workspaceOption)
  .addOption(new Option('--role <role>', 'what the key may do').choices(KEY_ROLES).default('admin'))
  .action((name: string, options: { workspace: string; role: KeyRole }) => {
    if (name.trim().length < 1 || name.length > 100) {
      process.stderr.write('warmup: the key name must be 1..100 characters\n');
      process.exit(2);
    }
    return withWorkspaceServices(async (workspaces) =>
      workspaces.createApiKey(await existingWorkspace(workspaces, options.workspace), name, options.role),
    );
  });
key
  .command('revoke <id>')
  .description('revoke a key: it stops working at once on every replica')
  .requiredOption(...workspaceOption)
  .action((id: string, options: { workspace: string }) =>
    withWorkspaceServices(async (workspaces) => {
      await workspaces.revokeApiKey(await existingWorkspace(workspaces, options.workspace), id);
      return { revoked: id };
    }),
  );

/** All of stdin (for --password-stdin), without its final line break; bounded like any input. */
async function readStdin(maxBytes = 4_096): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += chunk.toString();
    if (text.length > maxBytes) throw new AppError(400, 'validation_error', 'stdin is longer than a password can be');
  }
  return text.replace(/\r?\n$/, '');
}

// `warmup user`: accounts for headless installs, where no browser reaches the first-run page.
const user = program.command('user').description('manage the people who sign in to the dashboard');
user
  .command('create')
  .description('create a user with a role in a workspace (a new one unless --workspace) and print the ids as JSON')
  .requiredOption('--email <email>', 'the email the user signs in with')
  .requiredOption('--name <name>', 'the name teammates see')
  .requiredOption('--password-stdin', 'read the password from stdin (never an argument: it would show in `ps`)')
  .option('--owner', 'make the user an owner (the first owner ends the first-run setup)')
  .addOption(new Option('--role <role>', 'the role in the workspace').choices(ROLES).default('member'))
  .option('--workspace <id>', 'an existing workspace to join (default: a new workspace)')
  .option('--workspace-name <name>', 'the name of the new workspace', 'My workspace')
  .action(
    (options: {
      email: string;
      name: string;
      owner?: boolean;
      role: Role;
      workspace?: string;
      workspaceName: string;
    }) =>
      withServices(async (services) => {
        const password = await readStdin();
        if (!/^[^\s@]+@[^\s@]+$/.test(options.email) || options.email.length > 254) {
          throw new AppError(400, 'validation_error', 'the email is not an email address');
        }
        if (options.name.trim().length < 1 || options.name.length > 100) {
          throw new AppError(400, 'validation_error', 'the name must be 1..100 characters');
        }
        if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
          throw new AppError(
            400,
            'validation_error',
            `the password must be ${MIN_PASSWORD_LENGTH}..${MAX_PASSWORD_LENGTH} characters`,
          );
        }
        return services.accounts.createUser({
          email: options.email,
          name: options.name,
          password,
          role: options.owner ? 'owner' : options.role,
          workspaceId: options.workspace,
          workspaceName: options.workspaceName,
        });
      }),
  );

// `warmup peer`: the installations this one peers with, the same operations as /api/peers.
const peer = program
  .command('peer')
  .description('manage the installations this one warms mailboxes with (JSON output)');
/** A whole number from 0 to `max` for an option. */
function wholeNumber(max: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/.test(text) || value > max) throw new InvalidArgumentError(`must be a whole number from 0 to ${max}`);
    return value;
  };
}
peer
  .command('key')
  .description("print this installation's public key and its fingerprint (made on first use), for a peer to add")
  .action(() => withServices((services) => services.peers.identity()));
peer
  .command('add <url> <publicKey>')
  .description('add a peer by its URL and public key, pending until it has added this installation too')
  .requiredOption('--domain <domain...>', 'a domain whose active, proven mailboxes take part (repeat for more)')
  .requiredOption('--mailboxes <n>', 'at most this many of them', wholeNumber(1000))
  .requiredOption('--daily-ceiling <n>', "mail a day accepted from the peer's mailboxes", wholeNumber(100_000))
  .action((url: string, publicKey: string, options: { domain: string[]; mailboxes: number; dailyCeiling: number }) =>
    withServices(async (services) => {
      const body = {
        url,
        publicKey,
        offer: { domains: options.domain, mailboxes: options.mailboxes, dailyCeiling: options.dailyCeiling },
      };
      // the route's own schema: the command takes exactly what POST /api/peers takes
      const problem = Value.Errors(CreatePeerBody, body).First();
      if (problem) throw new AppError(400, 'validation_error', `${problem.path || 'input'}: ${problem.message}`);
      return { peer: await services.peers.add(body) };
    }),
  );
peer
  .command('list')
  .description('list the peers (removed ones are not listed)')
  .action(() => withServices(async (services) => ({ peers: await services.peers.list() })));
peer
  .command('pause <id>')
  .description('pause a peer: its requests are refused at once')
  .action((id: string) => withServices(async (services) => ({ peer: await services.peers.pause(id) })));
peer
  .command('resume <id>')
  .description('resume a paused peer: pending, greeted again, active when it still has this installation')
  .action((id: string) => withServices(async (services) => ({ peer: await services.peers.resume(id) })));
peer
  .command('remove <id>')
  .description('remove a peer: the peering ends at once')
  .action((id: string) =>
    withServices(async (services) => {
      await services.peers.remove(id);
      return { removed: id };
    }),
  );

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // A setting that is wrong (a bad WARMUP_SECRET_KEY, say) is a one-line message and exit code 2;
  // a database, folder or port that cannot be used is one line and exit code 1. The stack trace
  // is for debug logging only.
  if (error instanceof ConfigError) {
    process.stderr.write(`warmup: ${error.message}\n`);
    process.exit(2);
  }
  const debug = loaded?.logLevel === 'debug' || loaded?.logLevel === 'trace';
  const hint = debug || error instanceof StartupError ? '' : ' (LOG_LEVEL=debug shows the details)';
  process.stderr.write(`warmup: ${describeStartupFailure(error, loaded)}${hint}\n`);
  if (debug) process.stderr.write(`${stackOf(error instanceof StartupError ? error.cause : error)}\n`);
  process.exit(1);
}
