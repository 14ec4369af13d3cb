// The process: read config → open database → build app → listen. SIGTERM/SIGINT stop accepting,
// let in-flight requests finish (up to a deadline), close the database and exit.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from './config.js';
import { closeDatabase, openDatabase } from './db.js';
import { createApp } from './app.js';
import { jsonLogger as log } from './lib/log.js';

const SHUTDOWN_DEADLINE_MS = 10_000;

function main(): void {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const db = openDatabase(config.databasePath);
  const app = createApp({ db, config, log });
  const server = createServer(app.callback());
  // A client that never finishes sending its request is cut off.
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;

  server.listen(config.port, config.host, () => {
    const { address, port } = server.address() as AddressInfo;
    const host = address.includes(':') ? `[${address}]` : address;
    log.info({ msg: 'listening', url: `http://${host}:${port}`, database: config.databasePath });
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ msg: 'shutting down', signal });
    const deadline = setTimeout(() => {
      log.error({ msg: 'in-flight requests did not finish in time; closing anyway' });
      server.closeAllConnections();
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    server.close(() => {
      clearTimeout(deadline);
      closeDatabase(db);
      log.info({ msg: 'stopped' });
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
