// Counts the SQL statements single list requests run: the service's app in this process on a seeded
// database, better-sqlite3's Statement methods wrapped to count executions (a sub-select inside one
// statement counts once).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeDatabase, openDatabase } from '../../src/db.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/lib/log.js';
import { SECRET_KEY } from './options.js';
import { bearer } from './load.js';
import type { SeededUser } from './seed.js';

export async function countStatements(databasePath: string, user: SeededUser): Promise<Record<string, number>> {
  const db = openDatabase(databasePath);
  const Statement = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  let executed = 0;
  const originals: Record<string, (...args: unknown[]) => unknown> = {};
  for (const method of ['get', 'all', 'run', 'iterate']) {
    const original = Statement[method];
    originals[method] = original;
    Statement[method] = function (this: unknown, ...args: unknown[]) {
      executed++;
      return original.apply(this, args);
    };
  }
  let server: Server | undefined;
  const config = loadConfig({ DATABASE_PATH: databasePath, LOG_REQUESTS: 'off', RATE_LIMIT: 'off', INGEST: 'off' });
  // Not made the primary: its background writers (the webhook dispatcher, the expiry of runs
  // waiting for approval, ...) would run statements of their own on timers, counted with a
  // request's when one fires meanwhile (a page once counted 4 instead of 3). Reads need none of them.
  const app = createApp({ db, config, secretKey: SECRET_KEY, log: silentLogger });
  try {
    server = createServer(app.callback());
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    const count = async (path: string): Promise<number> => {
      executed = 0;
      const response = await fetch(base + path, { headers: bearer(user.tokens[0]) });
      const body = (await response.json()) as { data: unknown };
      if (response.status !== 200) throw new Error(`statement count: GET ${path} answered ${response.status}`);
      if (Array.isArray(body.data) && path.includes('limit=') && body.data.length !== Number(/limit=(\d+)/.exec(path)![1])) {
        throw new Error(`statement count: GET ${path} returned ${body.data.length} agents`);
      }
      return executed;
    };
    await count('/agents?limit=1'); // the token's first use records its lastUsedAt: not a per-page cost
    return {
      'GET /agents?limit=1': await count('/agents?limit=1'),
      'GET /agents?limit=10': await count('/agents?limit=10'),
      'GET /agents?limit=100': await count('/agents?limit=100'),
      'GET /agents?limit=1&after=': await count(`/agents?limit=1&after=${user.agents[49]}`),
      'GET /agents?limit=100&after=': await count(`/agents?limit=100&after=${user.agents[49]}`),
      'GET /agents/{id}': await count(`/agents/${user.agents[0]}`),
    };
  } finally {
    for (const [method, original] of Object.entries(originals)) Statement[method] = original;
    if (server) await new Promise<void>((done) => server!.close(() => done()));
    await app.stopBackgroundWork();
    closeDatabase(db);
  }
}
