// The durable-runs case (--only durable-runs): background runs against the fake model streaming
// slowly (scripts/bench/fake-model.ts, PACED_MARKER: 200 tokens each at 100 a second).
//
// 1. 100 background runs streaming at once, each followed live through GET /runs/{id}/events and
//    replaced by a new one when it ends (started a fiftieth of a run apart, so that they end and
//    start evenly, not in waves), while GET /agents/{id} is offered at 1,000/s (open loop);
//    alternating round by round with the same service idle. After each such round every run's log
//    is read again from the start: its `token` texts joined must equal the run's `output` (and what
//    its live follower got), its events numbered 1, 2, 3 … and ending with `done`.
//    The event log's commits are counted by the service itself: its `stopped` log line carries what
//    the log wrote in the process's life (the service has no other way to say it, and needs none);
//    only this part runs on that service, and the log writes only while runs stream, so commits ÷
//    the seconds runs streamed is the rate. Bytes per token: what the log wrote (its own count), and
//    what its table and index hold on disk (SQLite's dbstat, read from the file after the stop).
// 2. On a second service: the time from sending an invoke to its first `token` event, a background
//    run followed through GET /runs/{id}/events (the 202, then the events request) vs a foreground
//    streamed invoke, alternating round by round, runs of 5 tokens; both sides sent by the same
//    client code, one request at a time on one keep-alive connection.
import { copyFileSync } from 'node:fs';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { OPTS, fmt, log, median, percentile, round, sleep } from '../options.js';
import { seedAgents } from '../seed.js';
import { memoryOf, startHelper, type Proc } from '../processes.js';
import { bearer, compare, jsonHeaders, paced, probe, type Load, type RunResult } from '../load.js';
import { Latencies } from '../latencies.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';
import { TOKEN_MERGE_MS } from '../../../src/runs/event-log.js';

/** In the input of an agent run, asks the fake model for `<marker>:<tokens>:<per second>` paced tokens. */
const PACED_MARKER = 'bench-paced-stream';
const rate = 1000;
const streams = OPTS.quick ? 20 : 100;
const tokens = OPTS.quick ? 50 : 200;
const perSecond = 100;
/** How long one streaming run lasts (ms). */
const runMs = (tokens / perSecond) * 1000;
/** The runs of the first-token comparison: short, so that many fit in a round. */
const shortTokens = 5;

const REPLAYS = `${streams} background runs streaming at once (${tokens} tokens each at ${perSecond}/s): every replay (GET /runs/{id}/events, token texts joined) equals its run's output`;
const P99 = `${streams} background runs streaming: GET /agents/{id} p99 within 2× of idle (at ${fmt(rate)} req/s offered)`;
const COMMITS = `${streams} background runs streaming: event-log commits ≤ 10 a second in total`;
const FIRST_TOKEN = 'background run followed through GET /runs/{id}/events: first token within 5 ms (p50) of a foreground streamed invoke';

export const durableRuns: OwnCase = {
  name: 'durable-runs',
  uses: 'own servers',
  targets: [REPLAYS, P99, COMMITS, FIRST_TOKEN],
  run,
};

// ---- HTTP with Server-Sent Events --------------------------------------------------------------

interface SseEvent {
  id: number | undefined;
  name: string;
  data: string;
}

const ENDS = new Set(['done', 'error', 'requires_action']);

interface Call {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Sends `call` and reads its answer: an event stream event by event (`onEvent` for each, as it
 * comes), anything else whole. Resolves with the status, the events and the body of a non-stream.
 */
function send(
  agent: Agent,
  base: URL,
  call: Call,
  onEvent?: (event: SseEvent) => void,
): Promise<{ status: number; events: SseEvent[]; body: string }> {
  const body = Buffer.from(call.body ?? '');
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: call.method,
        path: call.path,
        headers: { ...call.headers, 'content-length': String(body.length) },
      },
      (res) => {
        res.setEncoding('utf8');
        const isStream = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
        const events: SseEvent[] = [];
        let text = '';
        res.on('data', (part: string) => {
          text += part;
          if (!isStream) return;
          let end: number;
          while ((end = text.indexOf('\n\n')) !== -1) {
            const block = text.slice(0, end);
            text = text.slice(end + 2);
            const event: SseEvent = { id: undefined, name: 'message', data: '' };
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('id: ')) event.id = Number(line.slice(4));
              else if (line.startsWith('event: ')) event.name = line.slice(7);
              else if (line.startsWith('data: ')) data.push(line.slice(6));
            }
            if (data.length === 0 && event.id === undefined) continue; // a keep-alive comment
            event.data = data.join('\n');
            events.push(event);
            onEvent?.(event);
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, events, body: isStream ? '' : text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const tokenText = (events: SseEvent[]) =>
  events
    .filter((e) => e.name === 'token')
    .map((e) => (JSON.parse(e.data) as { text: string }).text)
    .join('');

/** The answer the fake model streams for `n` paced tokens. */
const expectedText = (n: number) => Array.from({ length: n }, (_, k) => `${k === 0 ? '' : ' '}t${k + 1}`).join('');

// ---- background runs kept streaming ------------------------------------------------------------

interface FollowedRun {
  runId: string;
  token: string;
  /** The token texts its live follower got, joined. */
  live: string;
  end: string | undefined;
}

/**
 * Keeps `count` background runs streaming on `proc`: each slot starts a run (202), follows it
 * through GET /runs/{id}/events to its end, and starts the next; slot k begins k ÷ count of a run
 * after the first. `stop()` lets every slot finish the run it follows and says what ran.
 */
function keepStreaming(proc: Proc, starts: (Call & { token: string })[], count: number) {
  const base = new URL(proc.url);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const followed: FollowedRun[] = [];
  const problems: string[] = [];
  const startedAt = performance.now();
  let stopping = false;
  let next = 0;
  const slot = async (k: number) => {
    await sleep((k * runMs) / count);
    while (!stopping) {
      const start = starts[next++ % starts.length];
      const accepted = await send(agent, base, start);
      if (accepted.status !== 202) {
        problems.push(`a background invoke answered ${accepted.status}: ${accepted.body.slice(0, 200)}`);
        await sleep(100);
        continue;
      }
      const { runId } = (JSON.parse(accepted.body) as { data: { runId: string } }).data;
      const { status, events } = await send(agent, base, {
        method: 'GET',
        path: `/api/v1/runs/${runId}/events`,
        headers: bearer(start.token),
      });
      if (status !== 200) problems.push(`GET /runs/{id}/events answered ${status}`);
      followed.push({ runId, token: start.token, live: tokenText(events), end: events.at(-1)?.name });
    }
  };
  const slots = Array.from({ length: count }, (_, k) =>
    slot(k).catch((error: unknown) => void problems.push(`a streaming run failed: ${String(error)}`)),
  );
  return {
    /** Resolves once every slot is streaming. */
    ramped: () => sleep(runMs),
    async stop() {
      stopping = true;
      await Promise.all(slots);
      agent.destroy();
      return { followed, problems, seconds: (performance.now() - startedAt) / 1000 };
    },
  };
}

/**
 * Reads every followed run again, record and whole log: returns how many were read and what did
 * not hold (at most a few of each kind are described).
 */
async function checkReplays(proc: Proc, runs: FollowedRun[]): Promise<{ checked: number; wrong: string[] }> {
  const base = new URL(proc.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 10 });
  const wrong: string[] = [];
  const expected = expectedText(tokens);
  let at = 0;
  const worker = async () => {
    while (at < runs.length) {
      const run = runs[at++];
      const record = await send(agent, base, { method: 'GET', path: `/api/v1/runs/${run.runId}`, headers: bearer(run.token) });
      const { status, output } = (JSON.parse(record.body) as { data: { status: string; output: string | null } }).data;
      const replay = await send(agent, base, { method: 'GET', path: `/api/v1/runs/${run.runId}/events`, headers: bearer(run.token) });
      const text = tokenText(replay.events);
      const numbered = replay.events.every((e, k) => e.id === k + 1);
      const problems = [
        status !== 'succeeded' && `status ${status}`,
        output !== expected && `output of ${output?.length ?? 0} characters is not the model's ${expected.length}`,
        text !== output && `replay (${text.length} characters) differs from the output`,
        run.live !== output && `live follower's text (${run.live.length} characters) differs from the output`,
        replay.events.at(-1)?.name !== 'done' && `replay ends with ${replay.events.at(-1)?.name}`,
        run.end !== 'done' && `live follower's stream ended with ${run.end}`,
        !numbered && 'events not numbered 1, 2, 3 …',
      ].filter((p): p is string => typeof p === 'string');
      if (problems.length) wrong.push(`run ${run.runId}: ${problems.join(', ')}`);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
  agent.destroy();
  return { checked: runs.length, wrong };
}

// ---- time to the first token -------------------------------------------------------------------

/**
 * One invoke at a time for `seconds`: the time from sending it to its first `token` event, the
 * background way (202, then GET /runs/{id}/events) or the foreground way (a streamed invoke).
 */
async function firstToken(proc: Proc, calls: (Call & { token: string })[], background: boolean, seconds: number): Promise<RunResult> {
  const base = new URL(proc.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = new Latencies();
  let non2xx = 0;
  let errors = 0;
  let k = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    const call = calls[k++ % calls.length];
    const sent = performance.now();
    let first: number | undefined;
    const onEvent = (event: SseEvent) => {
      if (first === undefined && event.name === 'token') first = performance.now() - sent;
    };
    try {
      let answer = await send(agent, base, call, onEvent);
      if (background && answer.status === 202) {
        const { runId } = (JSON.parse(answer.body) as { data: { runId: string } }).data;
        answer = await send(agent, base, { method: 'GET', path: `/api/v1/runs/${runId}/events`, headers: bearer(call.token) }, onEvent);
      }
      if (answer.status !== 200 || first === undefined || answer.events.at(-1)?.name !== 'done') non2xx++;
      else latencies.add(first);
    } catch {
      errors++;
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const sorted = latencies.sorted();
  return {
    rps: round(latencies.count / elapsed),
    p50: round(percentile(sorted, 50), 2),
    p99: round(percentile(sorted, 99), 2),
    max: round(sorted.at(-1) ?? NaN, 2),
    requests: latencies.count,
    non2xx,
    errors,
    otherLoad: null,
    serverCores: null,
    generatorCores: null,
    cpuUs: null,
  };
}

// ---- the case ----------------------------------------------------------------------------------

/** What the service's `stopped` line says the run event log wrote in its life. */
async function eventLogStats(proc: Proc): Promise<{ commits: number; rows: number; bytes: number } | undefined> {
  const out = proc.child.stdout;
  if (out && !out.readableEnded) await Promise.race([once(out, 'end'), sleep(2000)]);
  for (const line of proc.logLines) {
    try {
      const entry = JSON.parse(line) as { msg?: string; runEvents?: { commits: number; rows: number; bytes: number } };
      if (entry.msg === 'stopped' && entry.runEvents) return entry.runEvents;
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

/** The bytes the run_events table and its indexes take in the file (SQLite's dbstat), and its rows. */
function eventsOnDisk(path: string): { bytes: number; rows: number } {
  const db = new Database(path, { readonly: true });
  try {
    const names = [
      'run_events',
      ...(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'run_events'").pluck().all() as string[]),
    ];
    const bytes = db
      .prepare(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (${names.map(() => '?').join(', ')})`)
      .pluck()
      .get(...names) as number;
    const rows = db.prepare('SELECT count(*) FROM run_events').pluck().get() as number;
    return { bytes, rows };
  } finally {
    db.close();
  }
}

async function run(ctx: BenchContext): Promise<CaseReport> {
  // 20 users, each with 10 agents without tools, documents or memory; the even ones have a prompt
  // with two variables. Each service on its own copy; both call one fake model.
  const plan = Array.from({ length: 20 }, () => ({ agents: 10, tokens: 1, tags: 2, prompts: 1, documents: 0, tools: 0 }));
  const seeded = seedAgents(join(ctx.dir, 'durable-runs.db'), plan, ctx.passwordHash);
  const secondDb = seeded.path.replace(/\.db$/, '-first-token.db');
  copyFileSync(seeded.path, secondDb);
  const fake = await startHelper('fake model (paced)', 'scripts/bench/fake-model.ts', { PACED_MARKER });
  // The operator's endpoint, and room for every run at once (no 429, nothing queued).
  const env = { OPENAI_BASE_URL: `${fake.url}/v1`, ALLOW_PRIVATE_NETWORKS: 'on', RUN_CONCURRENCY_PER_USER: '1000' };
  const svc = await ctx.service('service (durable runs)', seeded.path, { nodeArgs: ctx.profileArgs, monitor: true, env });

  const invokeBody = { input: 'Tell me a long story.', variables: { who: 'the team', language: 'English' } };
  const invokes = (extra: object) =>
    seeded.users.flatMap((user) =>
      user.agents
        .filter((_, j) => j % 2 === 0)
        .map((id) => ({
          method: 'POST',
          path: `/api/v1/agents/${id}/invoke`,
          headers: jsonHeaders(user.tokens[0]),
          body: JSON.stringify({ ...invokeBody, ...extra }),
          token: user.tokens[0],
        })),
    );
  const longRuns = invokes({ background: true, input: `${invokeBody.input} (${PACED_MARKER}:${tokens}:${perSecond})` });
  const getAgent: Load = {
    expectStatus: 200,
    requests: seeded.users.flatMap((user) =>
      user.agents.map((id) => ({ method: 'GET', path: `/api/v1/agents/${id}`, headers: bearer(user.tokens[0]) })),
    ),
  };
  await probe(svc, getAgent.requests[0], 200);
  const targets: Target[] = [];
  const results: Record<string, unknown> = {};

  // 1. GET /agents/{id} at a fixed offered rate, idle vs while 100 background runs stream.
  const idle: Proc = { ...svc, name: 'idle' };
  const busy: Proc = { ...svc, name: `${streams} streaming background runs` };
  let streamedSeconds = 0;
  let checked = 0;
  const wrong: string[] = [];
  const keeperProblems: string[] = [];
  const openCase = await compare(
    'durable-runs',
    `GET /agents/{id} at ${fmt(rate)}/s offered (open loop): idle vs ${streams} background runs streaming (${tokens} tokens at ${perSecond}/s each, followed live)`,
    [busy, idle],
    async (proc, s) => {
      if (proc === idle) return paced(svc, getAgent, rate, s);
      const keeper = keepStreaming(svc, longRuns, streams);
      await keeper.ramped();
      let result;
      try {
        // Not waiting for the service to go idle after the round: the runs keep it busy until stopped.
        result = await paced(svc, getAgent, rate, s, OPTS.settle, false);
      } finally {
        const kept = await keeper.stop();
        streamedSeconds += kept.seconds;
        keeperProblems.push(...kept.problems);
        const replays = await checkReplays(svc, kept.followed);
        checked += replays.checked;
        wrong.push(...replays.wrong);
        log(`${busy.name}: ${kept.followed.length} runs in ${fmt(kept.seconds, 1)} s, ${replays.wrong.length} replays wrong`);
      }
      return result;
    },
    { seconds: Math.max(OPTS.duration, OPTS.quick ? 2 : 5), settle: 0, rounds: OPTS.openLoopRounds },
  );
  const memory: Record<string, unknown> = { [svc.name]: memoryOf(svc.pid) };
  await ctx.stop(svc);
  if (OPTS.cpuProf) ctx.summariseProfileOf(svc);
  const stats = await eventLogStats(svc);
  const disk = eventsOnDisk(seeded.path);
  const tokensStreamed = (checked - wrong.length) * tokens;

  const [withRuns, idleRounds] = openCase.raw;
  const idleP99 = median(idleRounds.map((r) => r.p99));
  const busyP99 = median(withRuns.map((r) => r.p99));
  const perRound = withRuns.map((r, k) => round(r.p99 / idleRounds[k].p99, 2));
  for (const problem of new Set(keeperProblems)) openCase.problems.push(problem);
  targets.push({
    target: REPLAYS,
    measured:
      `${fmt(checked)} runs replayed, ${wrong.length} differ` +
      (wrong.length ? ` (${wrong.slice(0, 3).join('; ')})` : '') +
      (keeperProblems.length ? `; ${[...new Set(keeperProblems)].slice(0, 3).join('; ')}` : ''),
    pass: checked > 0 && wrong.length === 0 && keeperProblems.length === 0,
  });
  targets.push({
    target: P99,
    measured:
      `${fmt(busyP99, 2)} ms vs ${fmt(idleP99, 2)} ms idle (${fmt(busyP99 / idleP99, 2)}×; rounds ${perRound.join(', ')})` +
      (openCase.problems.length ? `; ${openCase.problems.join('; ')}` : ''),
    pass: openCase.problems.length === 0 && busyP99 <= 2 * idleP99,
  });
  const commitsPerSecond = stats ? stats.commits / streamedSeconds : NaN;
  targets.push({
    target: COMMITS,
    measured: stats
      ? `${fmt(commitsPerSecond, 1)} a second (${fmt(stats.commits)} commits in ${fmt(streamedSeconds, 1)} s of streaming, ${fmt(stats.rows)} events for ${fmt(tokensStreamed)} tokens); a run's last events go with the commit that records its end`
      : "the service's stopped line did not say",
    pass: stats !== undefined && commitsPerSecond <= 10,
  });
  const notes = [
    `Run event log: ${fmt(stats ? stats.bytes / tokensStreamed : NaN, 1)} bytes per token written (${fmt(stats?.bytes ?? NaN)} bytes, ` +
      `its own count: data, name and 16 for the numbers), ${fmt(disk.bytes / tokensStreamed, 1)} bytes per token on disk ` +
      `(the events table and its index: ${fmt(disk.bytes / 2 ** 20, 1)} MiB for ${fmt(disk.rows)} events of ${fmt(checked)} runs of ${tokens} tokens); ` +
      `${fmt(stats ? stats.rows / Math.max(1, checked) : NaN, 1)} events per run (tokens merged: at most one event every ${TOKEN_MERGE_MS} ms).`,
  ];

  // 2. Time to the first token: a background run followed through its events vs a foreground stream.
  const svc2 = await ctx.service('service (durable runs, first token)', secondDb, { nodeArgs: ctx.profileArgs, env });
  const shortInput = `${invokeBody.input} (${PACED_MARKER}:${shortTokens}:${perSecond})`;
  const backgroundCalls = invokes({ background: true, input: shortInput });
  const foregroundCalls = invokes({ stream: true, input: shortInput });
  const followed: Proc = { ...svc2, name: 'followed background run' };
  const foreground: Proc = { ...svc2, name: 'foreground streamed invoke' };
  const ttft = await compare(
    'durable-runs',
    'time to first token (ms; req/s = runs a second): background run followed through GET /runs/{id}/events vs foreground streamed invoke',
    [followed, foreground],
    (proc, s) => firstToken(svc2, proc === followed ? backgroundCalls : foregroundCalls, proc === followed, s),
    { seconds: Math.max(OPTS.duration, OPTS.quick ? 2 : 5) },
  );
  const [bg, fg] = ttft.raw;
  const gaps = bg.map((r, k) => round(r.p50 - fg[k].p50, 2));
  const gap = round(median(gaps), 2);
  targets.push({
    target: FIRST_TOKEN,
    measured:
      `${fmt(gap, 2)} ms later (rounds ${fmt(Math.min(...gaps), 2)}–${fmt(Math.max(...gaps), 2)}): p50 ${fmt(ttft.sides[0].p50, 2)} vs ${fmt(ttft.sides[1].p50, 2)} ms, ` +
      `p99 ${fmt(ttft.sides[0].p99, 2)} vs ${fmt(ttft.sides[1].p99, 2)} ms, ${fmt(bg.reduce((n, r) => n + r.requests, 0))} and ${fmt(fg.reduce((n, r) => n + r.requests, 0))} runs` +
      (ttft.problems.length ? `; ${ttft.problems.join('; ')}` : ''),
    pass: ttft.problems.length === 0 && gap <= 5,
  });
  for (const problem of [...openCase.problems, ...ttft.problems]) log(`⚠ durable runs: ${problem}`);
  memory[svc2.name] = memoryOf(svc2.pid);
  memory[fake.name] = memoryOf(fake.pid);
  await ctx.stop(svc2);
  await ctx.stop(fake);

  results.durableRuns = {
    streams,
    tokens,
    perSecond,
    rate,
    replays: { checked, wrong },
    openRuns: { idleP99, busyP99, perRound },
    eventLog: {
      ...stats,
      streamedSeconds: round(streamedSeconds, 1),
      commitsPerSecond: round(commitsPerSecond, 2),
      tokens: tokensStreamed,
      disk,
    },
    firstToken: { gapP50Ms: gap, perRound: gaps, background: ttft.sides[0], foreground: ttft.sides[1] },
    memory,
  };
  return { rows: [openCase, ttft], targets, notes, results };
}
