// Why the service could not start, in words an operator can act on: one line naming the setting,
// its value (never a secret's) and the cause. Used by src/main.ts and the admin scripts.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { describeSetting } from './config.js';

/** A refusal to start: `setting` and `value` say what to change, `message` why. */
export class StartupError extends Error {
  constructor(
    readonly setting: string,
    readonly value: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'StartupError';
  }

  /** The one line printed before the process exits. */
  line(): string {
    return `cannot start: ${describeSetting(this.setting, this.value)}: ${this.message}`;
  }
}

type SystemError = NodeJS.ErrnoException & { hostname?: string; address?: string; port?: number };

/** What a file-system or SQLite error code means, in words. */
function causeOf(error: SystemError): string {
  const where = error.path ? ` (${error.syscall ? `${error.syscall} ` : ''}${error.path})` : '';
  switch (error.code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied: the service's user may not create or write it${where}`;
    case 'ENOTDIR':
    case 'EEXIST':
      return `a part of the path is a file, not a directory${where}`;
    case 'EISDIR':
      return `it is a directory, not a database file${where}`;
    case 'ENOENT':
      return `a directory on the way cannot be created there${where}`;
    case 'EROFS':
      return `the file system is read-only${where}`;
    case 'ENOSPC':
      return `no space left on the device${where}`;
    case 'ENAMETOOLONG':
      return `the path is too long${where}`;
    case 'ELOOP':
      return `too many symbolic links on the way${where}`;
    case 'SQLITE_NOTADB':
      return 'the file exists but is not an SQLite database (point DATABASE_PATH at a new path, or at the database)';
    case 'SQLITE_CORRUPT':
      return 'the database file is corrupt (restore a backup)';
    case 'SQLITE_CANTOPEN':
      return 'SQLite cannot open the file (check that the directory is writable: SQLite creates -wal and -shm files beside it)';
    case 'SQLITE_READONLY':
    case 'SQLITE_READONLY_DIRECTORY':
      return "the database (or its directory) is read-only for the service's user";
    case 'SQLITE_BUSY':
      return 'the database stayed locked by another process for 5 s';
    case 'SQLITE_FULL':
      return 'no space left on the device';
    case 'SQLITE_IOERR':
    default:
      return oneLine(error.message);
  }
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, '; ');

/** Below this much free space, an I/O error of SQLite at start is taken for a full disk. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * True when the file system holding `dir` has (nearly) no space left. SQLite reports a full disk at
 * start as a plain I/O error (SQLITE_IOERR_SHMSIZE: it cannot make its -shm file), not as SQLITE_FULL.
 */
function isNearlyFull(dir: string): boolean {
  try {
    const { bavail, bsize } = statfsSync(dir);
    return bavail * bsize < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/** Opening DATABASE_PATH (directory, file, SQLite, migrations) failed with `error`. */
export function databaseStartupError(path: string, error: unknown): StartupError {
  if (error instanceof StartupError) return error;
  const system = error as SystemError;
  if (typeof system?.code === 'string' && system.code.startsWith('SQLITE_IOERR') && isNearlyFull(dirname(path))) {
    return new StartupError('DATABASE_PATH', path, `no space left on the device (${system.code}: ${oneLine(system.message)})`);
  }
  const cause = typeof system?.code === 'string' ? causeOf(system) : oneLine(String((error as Error)?.message ?? error));
  return new StartupError('DATABASE_PATH', path, cause);
}

/** Reading or creating the key file beside the database failed with `error`. */
export function keyFileStartupError(databasePath: string, keyPath: string, error: unknown): StartupError {
  const system = error as SystemError;
  const cause = typeof system?.code === 'string' ? causeOf(system) : oneLine(String((error as Error)?.message ?? error));
  return new StartupError('DATABASE_PATH', databasePath, `the key file ${keyPath}: ${cause} (or set SECRET_KEY)`);
}

/** `server.listen` failed with `error`. */
export function listenStartupError(host: string, port: number, error: unknown): StartupError {
  const system = error as SystemError;
  switch (system?.code) {
    case 'EADDRINUSE':
      return new StartupError(
        'PORT',
        String(port),
        `port ${port} on ${host} is already in use by another process (EADDRINUSE): stop it or choose another PORT`,
      );
    case 'EACCES':
    case 'EPERM':
      return new StartupError(
        'PORT',
        String(port),
        `permission denied listening on port ${port} (ports below 1024 need privileges): choose a PORT of 1024 or more`,
      );
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
    case 'EAI_AGAIN':
      return new StartupError(
        'HOST',
        host,
        `the host name cannot be resolved (${system.code}): use an IP address such as 127.0.0.1 or 0.0.0.0, or a name this machine resolves`,
      );
    case 'EADDRNOTAVAIL':
      return new StartupError(
        'HOST',
        host,
        "that address is not one of this machine's (EADDRNOTAVAIL): use 127.0.0.1, 0.0.0.0 or an address of one of its network interfaces",
      );
    case 'EAFNOSUPPORT':
      return new StartupError('HOST', host, 'this machine does not support that address family (EAFNOSUPPORT)');
    default:
      return new StartupError('HOST', host, `cannot listen on ${host}:${port}: ${oneLine(String((error as Error)?.message ?? error))}`);
  }
}
