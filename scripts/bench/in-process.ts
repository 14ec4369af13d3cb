// The framework's share without the network: the same requests through the service's Koa app
// (src/app.ts) and the bare-Koa reference app (bare-koa-app.ts) in this one process, on mock
// sockets, in alternating batches, timed by CPU. The closed-loop HTTP cases swing from run to run
// on a shared machine (the network stack, the load generator and the other servers all move);
// this measures only what differs between the two apps (middleware, routing, headers, body
// handling) and repeats within a few percent. Both run from the TypeScript sources here (tsx),
// not the production bundle.
//
// The benchmark runs this file as a child process (`inProcessInChild` in processes.ts, which does
// not import it): loaded into the benchmark's own process, the two apps stayed in the load
// generator's heap, and for minutes afterwards its event loop ran 12-28 ms late (1-4 ms otherwise),
// which the open-loop cases charged to the servers.
import { readFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { closeDatabase, openDatabase } from '../../src/db.js';
import { silentLogger } from '../../src/lib/log.js';
import { OPTS, SECRET_KEY, median, round } from './options.js';
import { bareKoaApp } from './bare-koa-app.js';
import { referenceWork } from './reference-work.js';
import type { SeededUser } from './seed.js';

export interface InProcessCase {
  title: string;
  /** CPU time per request (µs), median of the rounds. */
  serviceUs: number;
  bareUs: number;
  /** Bare Koa's µs ÷ the service's: 1 costs the same. Median of the rounds, and their range. */
  ratio: number;
  spread: [number, number];
}

interface MockRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** One request through `listener` on a socket that swallows what is written; resolves with the status. */
function send(listener: RequestListener, request: MockRequest): Promise<number> {
  const socket = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() });
  const req = new IncomingMessage(socket as never);
  req.method = request.method;
  req.url = request.url;
  req.headers = {
    host: '127.0.0.1',
    ...request.headers,
    ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) }),
  };
  const res = new ServerResponse(req);
  res.assignSocket(socket as never);
  return new Promise((resolve) => {
    // The answer is complete when the app ends it (the mock socket never reports a flush).
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      const ended = end(...args);
      resolve(res.statusCode);
      return ended;
    }) as typeof res.end;
    void listener(req, res);
    if (request.body !== undefined) req.push(request.body);
    req.push(null);
  });
}

/** GET /agents/{id} and POST /tools through both apps on the database at `path` (written to: use a copy). */
async function inProcess(path: string, users: SeededUser[]): Promise<InProcessCase[]> {
  const db = openDatabase(path);
  const env = { DATABASE_PATH: path, RATE_LIMIT: 'off', INGEST: 'off', LOG_REQUESTS: 'off' };
  const service = createApp({ db, config: loadConfig(env), secretKey: SECRET_KEY, log: silentLogger });
  service.becomePrimary();
  const work = referenceWork({ path, key: SECRET_KEY });
  const apps = [service.callback() as RequestListener, bareKoaApp(work).callback() as RequestListener];
  const token = (user: SeededUser) => ({ autorization: `Bearer ${user.tokens[0]}` });
  const cases: { title: string; status: number; batch: number; requests: MockRequest[] }[] = [
    {
      title: 'GET /agents/{id}',
      status: 200,
      batch: OPTS.quick ? 200 : 1500,
      requests: users.flatMap((user) =>
        user.agents.slice(0, 10).map((id) => ({ method: 'GET', url: `/api/v1/agents/${id}`, headers: token(user) })),
      ),
    },
    {
      title: 'POST /tools',
      status: 201,
      batch: OPTS.quick ? 50 : 300,
      requests: users.map((user) => ({
        method: 'POST',
        url: '/api/v1/tools',
        headers: { ...token(user), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench search', type: 'SEARCH', metadata: { api_key: 'secret' } }),
      })),
    },
  ];
  const rounds = OPTS.quick ? 3 : 20;
  const results: InProcessCase[] = [];
  try {
    for (const { title, status, batch, requests } of cases) {
      let next = 0;
      const cpuPerRequest = async (app: RequestListener) => {
        const before = process.cpuUsage();
        for (let i = 0; i < batch; i++) {
          const answered = await send(app, requests[next++ % requests.length]);
          if (answered !== status) throw new Error(`${title} in process answered ${answered}, expected ${status}`);
        }
        const used = process.cpuUsage(before);
        return (used.user + used.system) / batch;
      };
      const perRound: [number, number][] = [];
      // Two rounds of warm-up, then the order alternates round by round.
      for (let r = -2; r < rounds; r++) {
        const [first, second] = r % 2 === 0 ? [0, 1] : [1, 0];
        const costs: number[] = [];
        costs[first] = await cpuPerRequest(apps[first]);
        costs[second] = await cpuPerRequest(apps[second]);
        if (r >= 0) perRound.push([costs[0], costs[1]]);
      }
      const ratios = perRound.map(([svc, bare]) => bare / svc);
      results.push({
        title,
        serviceUs: round(median(perRound.map(([svc]) => svc)), 1),
        bareUs: round(median(perRound.map(([, bare]) => bare)), 1),
        ratio: round(median(ratios), 2),
        spread: [round(Math.min(...ratios), 2), round(Math.max(...ratios), 2)],
      });
    }
  } finally {
    await service.stopBackgroundWork();
    closeDatabase(db);
    work.close();
  }
  return results;
}

// Started by inProcessInChild: the database and the seeded users' file come in BENCH_IN_PROCESS.
if (process.env.BENCH_IN_PROCESS && process.argv[1] === fileURLToPath(import.meta.url)) {
  const { path, usersFile } = JSON.parse(process.env.BENCH_IN_PROCESS) as { path: string; usersFile: string };
  const cases = await inProcess(path, JSON.parse(readFileSync(usersFile, 'utf8')) as SeededUser[]);
  process.stdout.write(JSON.stringify(cases));
}
