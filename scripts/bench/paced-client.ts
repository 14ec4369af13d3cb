// The open-loop load generator of the fixed-rate cases (paced() in scripts/bench/load.ts), run in a
// fresh process for every round, started by pacedClientInChild() in scripts/bench/processes.ts.
// In the benchmark's own process the generator's event loop ran 8-16 ms late after minutes of
// closed-loop load (1-4 ms when the case ran alone), and a late generator sends late: the lateness
// counts as the server's latency. Here it has a heap of its own with nothing else in it, so what
// lateness remains (the table of stalls reports it) is the machine's.
//
// A fresh process runs cold code, so the round's unmeasured settling load (the same rate, right
// before the measured seconds, on the same schedule) comes from the same process: by the measured
// part both the server and the generator are warm.
//
// Over IPC: the parent sends a PacedJob; this process prepares the requests and answers 'ready'; the
// parent sends 'go'; this process says 'measuring' when the settling part is over (the parent starts
// its CPU meter), then sends the PacedOutcome and exits.
import { Agent, request as httpRequest, type RequestOptions } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Latencies } from './latencies.js';

/**
 * One request of a load, as autocannon takes it (scripts/bench/load.ts); defined here, with the
 * generator that needs nothing else of load.ts, so that no import runs back up to it.
 */
export interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface PacedJob {
  url: string;
  requests: AcRequest[];
  expectStatus: number;
  /** Requests offered per second, for `seconds`. */
  rate: number;
  seconds: number;
  /** Seconds of the same schedule before, not measured. */
  settleSeconds: number;
}

export interface PacedOutcome {
  /** From each request's scheduled time to the end of its answer, for answers with the expected status. */
  latencies: Float64Array;
  non2xx: number;
  errors: number;
  /** When the measured part started and the last answer came, in ms since the epoch (performance.timeOrigin + now). */
  startedAt: number;
  endedAt: number;
  /** The longest delay of this process's own event loop in the measured part: a late generator sends late. */
  loopMaxMs: number;
}

/** The event-loop delay is sampled like the servers' (scripts/bench/loop-monitor.ts). */
const LOOP_RESOLUTION_MS = 2;

/** The connection pool and each request's options and body, built once before the schedule starts. */
function prepare(job: PacedJob): { agent: Agent; requests: { options: RequestOptions; body?: Buffer }[] } {
  const url = new URL(job.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const requests = job.requests.map((r) => {
    const body = r.body === undefined ? undefined : Buffer.from(r.body);
    const headers = body ? Object.assign({}, r.headers, { 'content-length': String(body.length) }) : r.headers;
    return { options: { agent, host: url.hostname, port: url.port, method: r.method ?? 'GET', path: r.path, headers }, body };
  });
  return { agent, requests };
}

/**
 * `rate` requests a second for `settleSeconds` + `seconds`, each sent at its scheduled time on a
 * pool of keep-alive connections whatever happened to earlier ones; latency counts from the
 * scheduled time, so a stalled server is charged for the requests queued behind the stall.
 * `measuring` is called when the first measured request is sent.
 */
async function fire(job: PacedJob, prepared: ReturnType<typeof prepare>, measuring: () => void): Promise<PacedOutcome> {
  const skipped = Math.round(job.rate * job.settleSeconds);
  const total = skipped + Math.round(job.rate * job.seconds);
  const latencies = new Latencies();
  let non2xx = 0;
  let errors = 0;
  let finished = 0;
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  const start = performance.now() + 5;
  await new Promise<void>((resolve) => {
    const settle = () => {
      if (++finished === total) resolve();
    };
    const send = (i: number) => {
      const scheduled = start + (i * 1000) / job.rate;
      const { options, body } = prepared.requests[i % prepared.requests.length];
      const req = httpRequest(options, (res) => {
        res.resume();
        res.on('end', () => {
          if (i >= skipped) {
            if (res.statusCode === job.expectStatus) latencies.add(performance.now() - scheduled);
            else non2xx++;
          }
          settle();
        });
      });
      req.on('error', () => {
        if (i >= skipped) errors++;
        settle();
      });
      req.end(body);
    };
    let sent = 0;
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * job.rate) / 1000) + 1);
      if (sent <= skipped && due > skipped) {
        loop.reset();
        measuring();
      }
      while (sent < due) send(sent++);
      if (sent < total) setTimeout(tick, 1);
    };
    setTimeout(tick, 5);
  });
  const end = performance.now();
  loop.disable();
  prepared.agent.destroy();
  return {
    latencies: latencies.taken(),
    non2xx,
    errors,
    startedAt: performance.timeOrigin + start + (skipped * 1000) / job.rate,
    endedAt: performance.timeOrigin + end,
    // The histogram counts a late timer of the resolution: what is over it is the delay.
    loopMaxMs: Math.max(0, loop.max / 1e6 - LOOP_RESOLUTION_MS),
  };
}

if (process.send) {
  process.once('message', (job: PacedJob) => {
    const prepared = prepare(job);
    process.once('message', () => {
      void fire(job, prepared, () => process.send!('measuring')).then((outcome) => process.send!(outcome, () => process.disconnect()));
    });
    process.send!('ready');
  });
}
