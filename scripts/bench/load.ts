// Load generation: closed loop with autocannon (a fixed number of connections, each sending its next
// request when the last is answered: throughput), open loop with a small paced client (requests
// sent on a fixed schedule whatever the answers: latency at an offered rate), and comparisons that
// measure the servers in turn, in the same order every round.
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { OPTS, log, median, percentile, round, sleep } from './options.js';
import { Latencies } from './latencies.js';
import { CLOCK_TICKS, cpuSnapshot, cpuTicks, otherLoad, pacedClientInChild, runQueueWaitNs, type Proc } from './processes.js';
import type { AcRequest } from './paced-client.js';

// ---- autocannon (no bundled types; this is the part of its API used here) ----------------------

interface AcClient {
  setRequests(requests: AcRequest[]): void;
}
interface AcResult {
  duration: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
interface AcInstance extends PromiseLike<AcResult> {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): AcInstance;
  stop(): void;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  timeout: number;
  requests: AcRequest[];
  setupClient?: (client: AcClient) => void;
}) => AcInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface Load {
  /** The requests, rotated differently for each connection. */
  requests: AcRequest[];
  connections?: number;
  expectStatus: number;
  /** Seconds of unmeasured load before each measured run (default OPTS.settle). */
  settle?: number;
}

export interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  errors: number;
  otherLoad: number | null;
  /** CPU used during the run, in cores: the server measured, and this process (the load generator). */
  serverCores: number | null;
  generatorCores: number | null;
  /** The server's CPU time per answered request (µs): less sensitive to other load than req/s. */
  cpuUs: number | null;
}

export const bearer = (token: string) => ({ Autorization: `Bearer ${token}` });
export const jsonHeaders = (token: string) => ({ ...bearer(token), 'content-type': 'application/json' });

/** Requests per connection: each connection cycles through its own slice of the request set. */
const PER_CONNECTION = 64;

/**
 * Waits until the server has finished what it had already received (it keeps answering requests,
 * and hashing passwords, after the load generator has gone): its CPU use drops below 10% for 200 ms.
 */
export async function waitIdle(pid: number, maxMs = 60_000): Promise<void> {
  const deadline = performance.now() + maxMs;
  let last = cpuTicks(pid);
  while (last !== undefined && performance.now() < deadline) {
    await sleep(200);
    const now = cpuTicks(pid);
    if (now === undefined || now - last <= 2) return;
    last = now;
  }
}

/** CPU used by the server and by the load generator (this process, or the paced client's) from now. */
function cpuMeter(proc: Proc, generatorPid = process.pid) {
  const pids = [process.pid, generatorPid, proc.pid];
  const before = cpuSnapshot(pids);
  const started = { at: performance.now(), server: cpuTicks(proc.pid), generator: cpuTicks(generatorPid) };
  return () => {
    const seconds = (performance.now() - started.at) / 1000;
    const cores = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? null : round((b - a) / CLOCK_TICKS / seconds, 2);
    const serverNow = cpuTicks(proc.pid);
    return {
      serverTicks: started.server === undefined || serverNow === undefined ? null : serverNow - started.server,
      otherLoad: otherLoad(before, cpuSnapshot(pids)),
      serverCores: cores(started.server, serverNow),
      generatorCores: cores(started.generator, cpuTicks(generatorPid)),
    };
  };
}

/** Closed loop: autocannon with `connections` connections for `seconds`. */
export function runLoad(proc: Proc, load: Load, seconds: number, drain = true): { instance: AcInstance; done: Promise<RunResult> } {
  let rotation = 0;
  const all = load.requests;
  const connections = load.connections ?? OPTS.connections;
  const step = Math.max(1, Math.floor(all.length / connections));
  const latencies = new Latencies();
  const instance = autocannon({
    url: proc.url,
    connections,
    duration: seconds,
    timeout: 30,
    requests: all.slice(0, PER_CONNECTION),
    setupClient: (client) => {
      const offset = (rotation++ * step) % all.length;
      client.setRequests(Array.from({ length: Math.min(PER_CONNECTION, all.length) }, (_, k) => all[(offset + k) % all.length]));
    },
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status === load.expectStatus) latencies.add(ms);
  });
  const meter = cpuMeter(proc);
  const done = Promise.resolve(instance).then(async (result): Promise<RunResult> => {
    const cpu = meter();
    if (drain) await waitIdle(proc.pid);
    const sorted = latencies.sorted();
    const unexpected = Object.entries(result.statusCodeStats)
      .filter(([status]) => Number(status) !== load.expectStatus)
      .reduce((sum, [, { count }]) => sum + count, 0);
    return {
      rps: round(latencies.count / result.duration),
      p50: round(percentile(sorted, 50), 2),
      p99: round(percentile(sorted, 99), 2),
      max: round(sorted.at(-1) ?? NaN, 2),
      requests: latencies.count,
      non2xx: unexpected,
      errors: result.errors,
      ...cpu,
      cpuUs: cpu.serverTicks === null || latencies.count === 0 ? null : round((cpu.serverTicks * 1e6) / CLOCK_TICKS / latencies.count, 1),
    };
  });
  return { instance, done };
}

export const measure = (proc: Proc, load: Load, seconds: number) => runLoad(proc, load, seconds).done;

export interface PacedResult extends RunResult {
  /** Requests offered per second. */
  rate: number;
  /** The service's own time per request (request log `ms`), when it logs requests. */
  inside?: { p50: number; p99: number; count: number };
  /** Where a slow request's time went, when the server runs scripts/bench/loop-monitor.ts. */
  stalls?: Stalls;
}

/**
 * What held requests up during a paced round, in ms: the server's event loop (its longest delay and
 * its worst per-second p99), its garbage collection (longest pause, time in all), the time its main
 * thread waited for a core (ready to run, another process on the CPU), and the longest delay of the
 * load generator's own event loop (a late generator sends late, and the lateness counts as latency).
 */
export interface Stalls {
  loopMaxMs: number;
  loopP99Ms: number;
  gcMaxMs: number;
  /** The longest full (mark-sweep-compact) collection; the rest are scavenges of the young generation. */
  majorGcMaxMs: number;
  gcMs: number;
  runQueueMs: number | null;
  generatorLoopMaxMs: number;
}

/**
 * Open loop: `rate` requests a second for `settle` seconds (not measured), then `seconds`, sent on
 * schedule by a fresh child process (scripts/bench/paced-client.ts, which says how); latency counts
 * from each request's scheduled time. The settling load is part of the run (compare() is given
 * settle 0 for open-loop cases).
 */
export async function paced(
  proc: Proc,
  load: Load,
  rate: number,
  seconds: number,
  settle = OPTS.settle,
  /** Wait for the server to go idle after the round (false: work of its own keeps it busy). */
  drain = true,
): Promise<PacedResult> {
  const generator = await pacedClientInChild({
    url: proc.url,
    requests: load.requests,
    expectStatus: load.expectStatus,
    rate,
    seconds,
    settleSeconds: settle,
  });
  // Taken when the measured part starts (the child says so once the settling part is sent).
  let measured!: { logged: number; meter: ReturnType<typeof cpuMeter>; waitedBefore: number | undefined };
  const outcome = await generator.run(() => {
    measured = { logged: proc.requestMs.length, meter: cpuMeter(proc, generator.pid), waitedBefore: runQueueWaitNs(proc.pid) };
  });
  const { logged, meter, waitedBefore } = measured;
  const cpu = meter();
  const waitedAfter = runQueueWaitNs(proc.pid);
  if (drain) await waitIdle(proc.pid);
  // The loop monitor's reports for the seconds of the round (each arrives at the end of its second).
  if (proc.loopReports.length > 0) await sleep(1100);
  const start = outcome.startedAt - performance.timeOrigin;
  const end = outcome.endedAt - performance.timeOrigin;
  const reports = proc.loopReports.filter((report) => report.at > start + 1000 && report.at <= end + 1000);
  const sorted = outcome.latencies.sort();
  const result: PacedResult = {
    rate,
    rps: round(sorted.length / seconds),
    p50: round(percentile(sorted, 50), 2),
    p99: round(percentile(sorted, 99), 2),
    max: round(sorted.at(-1) ?? NaN, 2),
    requests: sorted.length,
    non2xx: outcome.non2xx,
    errors: outcome.errors,
    ...cpu,
    cpuUs: cpu.serverTicks === null || sorted.length === 0 ? null : round((cpu.serverTicks * 1e6) / CLOCK_TICKS / sorted.length, 1),
  };
  const inside = proc.requestMs.slice(logged).sort((a, b) => a - b);
  if (inside.length > 0)
    result.inside = { p50: round(percentile(inside, 50), 3), p99: round(percentile(inside, 99), 3), count: inside.length };
  if (reports.length > 0) {
    result.stalls = {
      loopMaxMs: round(Math.max(...reports.map((r) => r.loopMaxMs)), 2),
      loopP99Ms: round(Math.max(...reports.map((r) => r.loopP99Ms)), 2),
      gcMaxMs: round(Math.max(...reports.map((r) => r.gcMaxMs)), 2),
      majorGcMaxMs: round(Math.max(...reports.map((r) => r.majorGcMaxMs)), 2),
      gcMs: round(
        reports.reduce((sum, r) => sum + r.gcMs, 0),
        2,
      ),
      runQueueMs: waitedBefore === undefined || waitedAfter === undefined ? null : round((waitedAfter - waitedBefore) / 1e6, 1),
      generatorLoopMaxMs: round(outcome.loopMaxMs, 2),
    };
  }
  return result;
}

// ---- comparisons -------------------------------------------------------------------------------

export interface Side {
  name: string;
  rps: number;
  cpuUs: number;
  p50: number;
  p99: number;
  rounds: RunResult[];
}

export interface Comparison {
  key: string;
  title: string;
  /** The service first, then the references. */
  sides: Side[];
  /** Per reference: the median over rounds of service req/s ÷ reference req/s, and its range. */
  ratios: Record<string, { median: number; spread: [number, number]; cpu: number }>;
  otherLoad: number | null;
  problems: string[];
}

function side(name: string, rounds: RunResult[]): Side {
  return {
    name,
    rps: round(median(rounds.map((r) => r.rps))),
    cpuUs: round(median(rounds.map((r) => r.cpuUs ?? NaN)), 1),
    p50: round(median(rounds.map((r) => r.p50)), 2),
    p99: round(median(rounds.map((r) => r.p99)), 2),
    rounds,
  };
}

/**
 * A warm-up on each server, then `rounds` rounds in which each server is measured for `seconds`
 * (after `settle` seconds of the same load, unmeasured), in the same order every round.
 * `procs[0]` is the service.
 */
export async function compare<R extends RunResult>(
  key: string,
  title: string,
  procs: Proc[],
  run: (proc: Proc, seconds: number) => Promise<R>,
  { seconds = OPTS.duration, settle = OPTS.settle, rounds = OPTS.rounds }: { seconds?: number; settle?: number; rounds?: number } = {},
): Promise<Comparison & { raw: R[][] }> {
  if (OPTS.warmup > 0) {
    log(`${title}: warm-up`);
    for (const proc of procs) await run(proc, OPTS.warmup);
  }
  const results: R[][] = procs.map(() => []);
  for (let round_ = 0; round_ < rounds; round_++) {
    // The same order every round, so each server sits idle for as long as the others between its
    // runs: with an order rotating round by round, the server moving from first to last sat idle
    // twice as long (20 s) and ran ~10% slower in that run.
    for (let i = 0; i < procs.length; i++) {
      if (settle > 0) await run(procs[i], settle);
      results[i].push(await run(procs[i], seconds));
    }
    log(
      `${title}: round ${round_ + 1}/${rounds}: ${procs.map((p, i) => `${p.name} ${results[i][round_].rps} req/s p99 ${results[i][round_].p99} ms`).join(', ')}`,
    );
  }
  const problems: string[] = [];
  procs.forEach((proc, i) => {
    const unexpected = results[i].reduce((sum, r) => sum + r.non2xx, 0);
    const errors = results[i].reduce((sum, r) => sum + r.errors, 0);
    if (unexpected > 0) problems.push(`${proc.name}: ${unexpected} responses with an unexpected status`);
    if (errors > 0) problems.push(`${proc.name}: ${errors} connection errors or timeouts`);
  });
  const ratios: Comparison['ratios'] = {};
  for (let i = 1; i < procs.length; i++) {
    const perRound = results[0].map((r, k) => (results[i][k].rps > 0 ? r.rps / results[i][k].rps : NaN));
    // The same comparison by CPU time per request: reference µs ÷ service µs (1: as cheap).
    const cpu = median(results[i].map((r) => r.cpuUs ?? NaN)) / median(results[0].map((r) => r.cpuUs ?? NaN));
    ratios[procs[i].name] = {
      median: round(median(perRound), 2),
      spread: [round(Math.min(...perRound), 2), round(Math.max(...perRound), 2)],
      cpu: round(cpu, 2),
    };
  }
  const loads = results
    .flat()
    .map((r) => r.otherLoad)
    .filter((x): x is number => x !== null);
  return {
    key,
    title,
    sides: procs.map((p, i) => side(p.name, results[i])),
    ratios,
    otherLoad: loads.length ? Math.max(...loads) : null,
    problems,
    raw: results,
  };
}

/** Sends one request and checks its status before a case is measured (a wrong setup fails loudly). */
export async function probe(proc: Proc, request: AcRequest, expectStatus: number): Promise<void> {
  const response = await fetch(proc.url + request.path, { method: request.method ?? 'GET', headers: request.headers, body: request.body });
  const text = await response.text();
  if (response.status !== expectStatus) {
    throw new Error(
      `${proc.name}: ${request.method ?? 'GET'} ${request.path} answered ${response.status}, expected ${expectStatus}: ${text.slice(0, 300)}`,
    );
  }
}

// ---- streamed agent runs -----------------------------------------------------------------------

/** Where a stream's first token is: a `token` event of the service, or a content chunk of the model. */
/** What the first token is: an invoke's `token` event, a chat completion chunk with content, or a response's first text delta. */
export type FirstToken = 'token-event' | 'model-chunk' | 'response-delta';

/** The end of the first token in `text` (the SSE read so far), or -1 while there is none yet. */
function firstTokenIn(text: string, kind: FirstToken): number {
  if (kind === 'token-event' || kind === 'response-delta') {
    const at = text.indexOf(kind === 'token-event' ? 'event: token\n' : 'event: response.output_text.delta\n');
    return at === -1 ? -1 : text.indexOf('\n\n', at);
  }
  let from = 0;
  for (let end = text.indexOf('\n\n'); end !== -1; from = end + 2, end = text.indexOf('\n\n', from)) {
    const line = text.slice(from, end);
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const content = (JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
    if (content) return end;
  }
  return -1;
}

/**
 * Streamed requests one at a time for `seconds` on one keep-alive connection: each one's time from
 * sending it to the first token (`kind`) read, and how many finished a second.
 */
export async function timeToFirstToken(proc: Proc, request: AcRequest, kind: FirstToken, seconds: number): Promise<RunResult> {
  const url = new URL(proc.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = Buffer.from(request.body ?? '');
  const latencies = new Latencies();
  let non2xx = 0;
  let errors = 0;
  const meter = cpuMeter(proc);
  const started = performance.now();
  const until = started + seconds * 1000;
  while (performance.now() < until) {
    await new Promise<void>((resolve) => {
      const sent = performance.now();
      let first = false;
      let text = '';
      const req = httpRequest(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: request.method ?? 'POST',
          path: request.path,
          headers: { ...request.headers, 'content-length': String(body.length) },
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (part: string) => {
            if (first) return;
            text += part;
            if (firstTokenIn(text, kind) !== -1) {
              first = true;
              latencies.add(performance.now() - sent);
            }
          });
          res.on('end', () => {
            if (res.statusCode !== 200 || !first) non2xx++;
            resolve();
          });
          res.on('error', () => {
            errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  }
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const cpu = meter();
  const sorted = latencies.sorted();
  return {
    rps: round(latencies.count / elapsed),
    p50: round(percentile(sorted, 50), 2),
    p99: round(percentile(sorted, 99), 2),
    max: round(sorted.at(-1) ?? NaN, 2),
    requests: latencies.count,
    non2xx,
    errors,
    ...cpu,
    cpuUs: cpu.serverTicks === null || latencies.count === 0 ? null : round((cpu.serverTicks * 1e6) / CLOCK_TICKS / latencies.count, 1),
  };
}

/** Streams held open on a server, each on its own connection. */
export interface OpenStreams {
  /** Their time to the first token, ascending (ms). */
  firstTokenMs: number[];
  /** Disconnects every stream and waits until the server is idle again. */
  close(): Promise<void>;
}

/**
 * Opens one streamed request per entry of `requests` at once and resolves when every one has
 * received its first token event; throws (closing them all) when one answers anything else or has
 * no token within `timeoutMs`.
 */
export async function openStreams(proc: Proc, requests: AcRequest[], timeoutMs = 30_000): Promise<OpenStreams> {
  const url = new URL(proc.url);
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const pending: ReturnType<typeof httpRequest>[] = [];
  const close = async () => {
    for (const req of pending) req.destroy();
    agent.destroy();
    await waitIdle(proc.pid);
  };
  const firstTokenMs: number[] = [];
  try {
    await Promise.all(
      requests.map(
        (request) =>
          new Promise<void>((resolve, reject) => {
            const body = Buffer.from(request.body ?? '');
            const sent = performance.now();
            const timer = setTimeout(() => reject(new Error(`${proc.name}: a held stream had no token within ${timeoutMs} ms`)), timeoutMs);
            let text = '';
            const req = httpRequest(
              {
                agent,
                host: url.hostname,
                port: url.port,
                method: request.method ?? 'POST',
                path: request.path,
                headers: { ...request.headers, 'content-length': String(body.length) },
              },
              (res) => {
                res.setEncoding('utf8');
                res.on('data', (part: string) => {
                  if (text === undefined) return;
                  text += part;
                  if (res.statusCode !== 200) return;
                  if (firstTokenIn(text, 'token-event') !== -1) {
                    firstTokenMs.push(performance.now() - sent);
                    text = undefined as unknown as string;
                    clearTimeout(timer);
                    resolve();
                  }
                });
                // Closed by close(): the reset is expected.
                res.on('error', () => {});
                res.on('end', () => {
                  clearTimeout(timer);
                  reject(new Error(`${proc.name}: a held stream ended early (${res.statusCode}): ${(text ?? '').slice(0, 300)}`));
                });
              },
            );
            req.on('error', (error) => {
              clearTimeout(timer);
              reject(error);
            });
            pending.push(req);
            req.end(body);
          }),
      ),
    );
  } catch (error) {
    await close();
    throw error;
  }
  return { firstTokenMs: firstTokenMs.sort((a, b) => a - b), close };
}
