import { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from './config.js';
import { closeOnSignals, createLogger, openMigratedDatabase, startServer } from './main.js';
import { systemClock } from './clock.js';
import { createServices } from './services.js';

function config(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`warmup: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

const program = new Command('warmup').description('Self-hosted email warmup service').showHelpAfterError();

program
  .command('serve')
  .description('serve the API and dashboard, and run the warmup engine in the same process')
  .option('--no-engine', 'serve without the warmup engine (scale-out API replica)')
  .action(async (options: { engine: boolean }) => {
    const settings = config();
    const logger = createLogger(settings);
    const server = await startServer(settings, logger);
    void options.engine;
    closeOnSignals(logger, server.close);
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
    const database = await openMigratedDatabase(settings);
    try {
      const services = createServices({ db: database.db, dialect: database.dialect, clock: systemClock, dataDir: settings.dataDir, secretKey: settings.secretKey });
      const created = await services.workspaces.createWorkspace(trimmed);
      process.stdout.write(`${JSON.stringify(created)}\n`);
    } finally {
      await database.close();
    }
  });

await program.parseAsync(process.argv);
