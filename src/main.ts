// The process: read config → open database → build app → listen. SIGTERM/SIGINT stop accepting,
// let in-flight requests finish (up to a deadline), close the database and exit 0.
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from './config.js';
import { closeDatabase, openDatabase } from './db.js';
import { createApp } from './app.js';
import { createHttpServer } from './server.js';
import { jsonLogger as log } from './lib/log.js';
import { loadOrCreateKeyFile } from './lib/secrets.js';

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
}

function main(): void {
  const config = loadConfigOrExit();
  // Everything this process creates (database, WAL, key file) is readable by its owner only.
  process.umask(0o077);
  const db = openDatabase(config.databasePath);
  const secretKey = config.secretKey ?? loadOrCreateKeyFile(`${config.databasePath}.key`);
  const app = createApp({ db, config, secretKey, log });
  const server = createHttpServer(app, config);

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
      log.info({ msg: 'stopped' });
      process.exit(0);
    });
    server.closeIdleConnections();
    // Open event streams would hold server.close() until the deadline: end them now (each gets an
    // `error` event and its run is marked failed), then their connections close like any other.
    void app.runs.shutdown().then(() => server.closeIdleConnections());
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
