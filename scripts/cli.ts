// What the operator scripts share: options with --help, the service's own configuration, database
// and stores, and reading a password without echoing it. Exit codes: 0 done, 1 failed, 2 bad usage
// or configuration.
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { loadConfig, loadEnvFile, type Config } from '../src/config.js';
import { openDatabase, type Db } from '../src/db.js';
import { createStores, type Stores } from '../src/stores.js';
import { ApiError, type FieldIssue } from '../src/http/errors.js';
import { parse } from '../src/http/validate.js';
import { SignUpSchema } from '../src/auth/schema.js';
import { createUserAdminStore, type UserAdminStore } from '../src/users/admin-store.js';
import { createSealer, loadOrCreateKeyFile } from '../src/lib/secrets.js';
import { databaseStartupError, keyFileStartupError, StartupError } from '../src/startup.js';
import { unsupportedNodeLine } from '../src/lib/node-lines.js';

/** A mistake in how the script was called: reported with the usage text, exit code 2. */
export class UsageError extends Error {}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/**
 * Parses the command line strictly (unknown options are a UsageError). `--help`/`-h` prints
 * `usage` and exits 0 before anything else happens.
 */
export function parseCommandLine<const O extends OptionSpec>(usage: string, options: O, args = process.argv.slice(2)) {
  const config = {
    args,
    options: { ...options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: 'h' } },
    allowPositionals: true,
    strict: true,
  } as const;
  let parsed: ReturnType<typeof parseArgs<typeof config>>;
  try {
    parsed = parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return parsed;
}

/** Runs a script's main function and turns whatever it throws into a message and an exit code. */
export function runScript(usage: string, main: () => Promise<void> | void): void {
  // The scripts open the database with the same driver as the service, so they refuse the same Node lines.
  const nodeLine = unsupportedNodeLine();
  if (nodeLine) {
    process.stderr.write(`error: ${nodeLine}\n`);
    process.exitCode = 1;
    return;
  }
  Promise.resolve()
    .then(main)
    .catch((error: unknown) => {
      if (error instanceof StartupError) {
        process.stderr.write(`error: ${error.line().replace(/^cannot start: /, '')}\n`);
        process.exitCode = 1;
      } else if (error instanceof UsageError) {
        process.stderr.write(`${error.message}\n\n${usage}`);
        process.exitCode = 2;
      } else if (error instanceof ApiError && Array.isArray(error.details)) {
        // A validation failure from the service's own schemas: name each field, never its value.
        const lines = (error.details as FieldIssue[]).map((issue) => `  ${issue.path || 'input'}: ${issue.message}`);
        process.stderr.write(`error: invalid input\n${lines.join('\n')}\n`);
        process.exitCode = 2;
      } else {
        process.stderr.write(`error: ${(error as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}

/** The service's configuration from the environment (and .env, when present), exactly as src/main.ts reads it. */
export function loadServiceConfig(): Config {
  try {
    loadEnvFile();
    return loadConfig();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Opens DATABASE_PATH the way src/main.ts does (owner-only files, migrations applied, the secret
 * key from SECRET_KEY or the key file beside the database) and prepares the service's stores.
 */
export function openServiceStores(config: Config): { db: Db; stores: Stores } {
  process.umask(0o077);
  const path = config.databasePath;
  let db: Db;
  try {
    db = openDatabase(path, { onWarning: (message) => process.stderr.write(`warning: ${message}\n`), litestream: config.litestream });
  } catch (error) {
    throw databaseStartupError(path, error);
  }
  try {
    const key = config.secretKey ?? loadOrCreateKeyFile(`${path}.key`);
    return { db, stores: createStores(db, createSealer(key)) };
  } catch (error) {
    db.close();
    throw keyFileStartupError(path, `${path}.key`, error);
  }
}

/**
 * Opens the existing database at DATABASE_PATH (migrations applied; never creating one) for a script
 * that administers accounts, with the operator's store.
 */
export function openExistingDatabase(config: Config): { db: Db; admin: UserAdminStore } {
  const path = config.databasePath;
  if (!existsSync(path)) throw new Error(`no database at ${path} (DATABASE_PATH); the service creates it on first start`);
  process.umask(0o077);
  let db: Db;
  try {
    db = openDatabase(path, { litestream: config.litestream });
  } catch (error) {
    throw databaseStartupError(path, error);
  }
  return { db, admin: createUserAdminStore(db) };
}

/** Email as sign-up stores it (trimmed, lower-cased), refusing a malformed one. */
export function parseEmail(text: string): string {
  return parse(SignUpSchema.entries.email, text, 'email');
}

/**
 * Asks `question` on standard error and reads one line from standard input (a terminal or a pipe):
 * true only for "y" or "yes". End of input counts as no.
 */
export async function confirm(question: string): Promise<boolean> {
  process.stderr.write(`${question} [y/N] `);
  const lines = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of lines) return /^\s*y(es)?\s*$/i.test(line);
    return false;
  } finally {
    lines.close();
    if (!process.stdin.isTTY) process.stderr.write('\n');
  }
}

/**
 * A password from `--password`, else from standard input: typed at a terminal without echo (twice,
 * to catch typos), or read whole from a pipe (one trailing newline dropped).
 */
export async function readPassword(given: string | undefined, what = 'Password'): Promise<string> {
  if (given !== undefined) return given;
  if (process.stdin.isTTY) {
    const first = await promptHidden(`${what}: `);
    const second = await promptHidden(`${what} again: `);
    if (first !== second) throw new Error('the two passwords differ');
    return first;
  }
  let text = '';
  for await (const chunk of process.stdin.setEncoding('utf8')) text += chunk;
  text = text.replace(/\r?\n$/, '');
  if (text === '') throw new UsageError('no password: pass --password or send it on standard input');
  return text;
}

/** Reads one line from the terminal in raw mode, so the characters typed are never shown. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed: string[] = [];
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') {
          finish();
          resolve(typed.join(''));
          return;
        }
        if (char === '\u0003' || char === '\u0004') {
          finish();
          reject(new Error('cancelled'));
          return;
        }
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed.push(char);
      }
    };
    stdin.on('data', onData);
  });
}
