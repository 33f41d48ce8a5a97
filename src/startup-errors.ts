// What the `warmup` command says when it cannot start: one line with what is wrong, the path or
// URL involved and the fix, instead of a driver's stack trace. The cause (with its stack) is kept
// on the error for debug logging.
import path from 'node:path';
import type { Config } from './config.js';

export class StartupError extends Error {
  override readonly name = 'StartupError';
}

type Where = Pick<Config, 'dataDir' | 'databaseUrl' | 'host' | 'port'>;

interface SystemError {
  code?: string;
  path?: string;
  syscall?: string;
  address?: string;
  port?: number;
  message?: string;
  errors?: unknown[];
}

function asSystemError(error: unknown): SystemError {
  if (typeof error !== 'object' || error === null) return { message: String(error) };
  const e = error as SystemError;
  // net.connect with several addresses (localhost: ::1 and 127.0.0.1) fails with an AggregateError
  if (!e.code && Array.isArray(e.errors) && e.errors.length > 0) return { ...asSystemError(e.errors[0]), ...e };
  return e;
}

/** A PostgreSQL URL without its password or query string: safe to print. */
export function displayDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const user = url.username ? `${url.username}@` : '';
    return `${url.protocol}//${user}${url.host}${url.pathname}`;
  } catch {
    return 'DATABASE_URL (unparsable)';
  }
}

function databaseName(databaseUrl: string): string {
  try {
    return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || 'postgres';
  } catch {
    return '?';
  }
}

const FILE_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ENOENT', 'EISDIR', 'ENOSPC', 'EEXIST']);

function fileProblem(code: string | undefined): string {
  switch (code) {
    case 'EROFS':
      return 'is on a read-only file system';
    case 'ENOTDIR':
      return 'is inside something that is not a folder';
    case 'ENOSPC':
      return 'is on a full disk';
    case 'ENOENT':
      return 'does not exist and cannot be created';
    default:
      return 'is not writable by this user';
  }
}

/** The data folder (SQLite file, secret key) cannot be used. */
function describeDataFolder(e: SystemError, where: Where): string {
  const target = e.path ?? path.join(where.dataDir, 'warmup.db');
  const folder = e.path && !e.path.startsWith(where.dataDir) ? path.dirname(e.path) : where.dataDir;
  if (e.code === 'ENOSPC') return `cannot write ${target}: the disk is full; free some space in ${folder}`;
  const problem = e.code?.startsWith('SQLITE')
    ? `is not writable by this user (${target} cannot be opened)`
    : `${fileProblem(e.code)} (${target})`;
  return (
    `the data folder ${folder} ${problem}: make it writable for this user, ` +
    `or set WARMUP_DATA_DIR to a folder that is`
  );
}

function describePostgres(e: SystemError & { code?: string }, databaseUrl: string): string | undefined {
  const url = displayDatabaseUrl(databaseUrl);
  switch (e.code) {
    case '3D000': {
      const name = databaseName(databaseUrl);
      return `the PostgreSQL database "${name}" does not exist (${url}): create it (createdb ${name}) or fix DATABASE_URL`;
    }
    case '28P01':
    case '28000':
      return `PostgreSQL refused the login (${url}): fix the user or password in DATABASE_URL`;
    case '42501':
      return `the PostgreSQL user may not create or change tables (${url}): grant it CREATE on the database or its schema`;
    case '53300':
      return `PostgreSQL has no free connection (${url}): raise max_connections or run fewer processes`;
    case 'ECONNREFUSED':
      return `cannot reach PostgreSQL at ${url} (connection refused): start it, or fix the host and port in DATABASE_URL`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot reach PostgreSQL at ${url} (host name not found): fix the host in DATABASE_URL`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `cannot reach PostgreSQL at ${url} (${e.code}): check the network or the host in DATABASE_URL`;
    case 'ECONNRESET':
      return `PostgreSQL at ${url} closed the connection (is it TLS-only? then add sslmode=require to DATABASE_URL)`;
    default:
      return undefined;
  }
}

function describeListen(e: SystemError, where: Where): string | undefined {
  const address = `${where.host}:${where.port}`;
  switch (e.code) {
    case 'EADDRINUSE':
      return `port ${where.port} on ${where.host} is already in use: stop the other process or set PORT to a free port`;
    case 'EACCES':
    case 'EPERM':
      return `not allowed to listen on ${address}: use a PORT above 1023 or give the process the right to bind it`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${address}: HOST is not an address of this machine (use 127.0.0.1 or 0.0.0.0)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${address}: HOST is not a known host name (use 127.0.0.1 or 0.0.0.0)`;
    default:
      return undefined;
  }
}

/** Opening (and migrating) the database failed: a StartupError whose message is one line. */
export function databaseStartupError(error: unknown, where: Where): StartupError {
  const e = asSystemError(error);
  const message =
    (where.databaseUrl
      ? describePostgres(e, where.databaseUrl)
      : e.code?.startsWith('SQLITE_CANTOPEN') ||
          e.code === 'SQLITE_READONLY' ||
          e.code === 'SQLITE_IOERR' ||
          FILE_CODES.has(e.code ?? '')
        ? describeDataFolder(e, where)
        : undefined) ??
    `cannot open the database (${where.databaseUrl ? displayDatabaseUrl(where.databaseUrl) : path.join(where.dataDir, 'warmup.db')}): ${firstLine(e.message)}`;
  return new StartupError(message, { cause: error });
}

/** Listening on HOST:PORT failed. */
export function listenStartupError(error: unknown, where: Where): StartupError {
  const e = asSystemError(error);
  return new StartupError(
    describeListen(e, where) ?? `cannot listen on ${where.host}:${where.port}: ${firstLine(e.message)}`,
    { cause: error },
  );
}

/** Any other failure while starting a command (the secret key file, say), as one line. */
export function describeStartupFailure(error: unknown, where: Where | undefined): string {
  if (error instanceof StartupError) return error.message;
  const e = asSystemError(error);
  if (e.path && FILE_CODES.has(e.code ?? '') && where) return describeDataFolder(e, where);
  if (e.path && FILE_CODES.has(e.code ?? ''))
    return `cannot write ${e.path} (${e.code}): make it writable for this user`;
  return `could not start: ${firstLine(e.message)}`;
}

function firstLine(text: string | undefined): string {
  return (text ?? 'unknown error').split('\n')[0]!.trim();
}
