// The process: read .env and the config → open database → build app → listen. SIGTERM/SIGINT stop
// accepting, let in-flight requests finish (up to a deadline), close the database and exit 0.
// Anything that keeps it from starting ends with one line on stderr naming the setting, its value
// (never a secret's) and the cause, and a non-zero exit: 2 for a bad setting, 1 for the rest.
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadConfig, loadEnvFile, type Config } from './config.js';
import { closeDatabase, openDatabase, type Db } from './db.js';
import { createApp } from './app.js';
import { createHttpServer } from './server.js';
import { jsonLogger as log } from './lib/log.js';
import { unsupportedNodeLine } from './lib/node-lines.js';
import { loadOrCreateKeyFile } from './lib/secrets.js';
import { createUserAdminStore } from './users/admin-store.js';
import { databaseStartupError, keyFileStartupError, listenStartupError } from './startup.js';

/** Ends the process before it serves: one line on stderr, no stack trace. */
function refuseToStart(line: string, code: number): never {
  process.stderr.write(`${line}\n`);
  process.exit(code);
}

/** A line worth an operator's attention that does not stop the start. */
function warn(message: string): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: message })}\n`);
}

function loadSettings(): { config: Config; envFile: string | null } {
  let envFile: string | null;
  try {
    envFile = loadEnvFile();
  } catch (error) {
    refuseToStart(`cannot start: ${(error as Error).message}`, 2);
  }
  try {
    return { config: loadConfig(), envFile };
  } catch (error) {
    refuseToStart(`cannot start: ${(error as Error).message}`, 2);
  }
}

function openStorage(config: Config): { db: Db; secretKey: Buffer } {
  const path = config.databasePath;
  const keyPath = `${path}.key`;
  const isNew = !existsSync(path);
  let db: Db;
  try {
    db = openDatabase(path, { onWarning: warn, litestream: config.litestream });
  } catch (error) {
    refuseToStart(databaseStartupError(path, error).line(), 1);
  }
  if (isNew && config.secretKey === undefined && existsSync(keyPath)) {
    warn(`the key file ${keyPath} exists but its database did not: started a new, empty database (was the database moved or deleted?)`);
  }
  try {
    return { db, secretKey: config.secretKey ?? loadOrCreateKeyFile(keyPath) };
  } catch (error) {
    closeDatabase(db);
    refuseToStart(keyFileStartupError(path, keyPath, error).line(), 1);
  }
}

function main(): void {
  const nodeLine = unsupportedNodeLine();
  if (nodeLine) refuseToStart(`cannot start: ${nodeLine}`, 1);
  const { config, envFile } = loadSettings();
  // Everything this process creates (database, WAL, key file) is readable by its owner only.
  process.umask(0o077);
  const { db, secretKey } = openStorage(config);
  const hasUsers = createUserAdminStore(db).hasUsers();
  const app = createApp({ db, config, secretKey, log });
  // This process is the database's one writer (see docs/operations.md, "Serving from several machines").
  app.becomePrimary();
  const server = createHttpServer(app, config);

  // Until it listens, a server error (port taken, unknown host) means it cannot start.
  const failToListen = async (error: Error) => {
    await app.stopBackgroundWork();
    closeDatabase(db);
    refuseToStart(listenStartupError(config.host, config.port, error).line(), 1);
  };
  server.once('error', failToListen);
  server.listen(config.port, config.host, () => {
    server.off('error', failToListen);
    const { address, port } = server.address() as AddressInfo;
    const host = address.includes(':') ? `[${address}]` : address;
    const url = `http://${host}:${port}`;
    const firstUser = hasUsers
      ? {}
      : config.signUp
        ? { firstUser: `no users yet: sign up in the console at ${url}/, or run: npm run user:create -- --email <email> --name <name>` }
        : { firstUser: 'no users yet and SIGN_UP is off: run npm run user:create -- --email <email> --name <name>' };
    log.info({ msg: 'listening', url, console: `${url}/`, docs: `${url}/docs`, database: config.databasePath, envFile, ...firstUser });
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ msg: 'shutting down', signal });
    const deadline = setTimeout(() => {
      log.error({ msg: 'in-flight requests did not finish in time; closing their connections' });
      server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    deadline.unref();
    server.close(async () => {
      clearTimeout(deadline);
      // Running ingestion jobs are abandoned (their documents go back to pending at the next start);
      // chunks of deleted documents not yet swept are swept after the next start.
      await app.stopBackgroundWork();
      closeDatabase(db);
      // What the run event log wrote in this process's life: its commits stay a few a second
      // however many runs stream (the operator's check, and the benchmark's count).
      log.info({ msg: 'stopped', runEvents: app.eventLog.stats() });
      process.exit(0);
    });
    server.closeIdleConnections();
    // Open event streams and `?wait=` long-polls would hold server.close() until the deadline: end
    // them now (a stream gets an `error` event and its run is marked failed; a long-poll answers with
    // the document as it is), then their connections close like any other.
    void app.releaseHeldRequests().then(() => server.closeIdleConnections());
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
