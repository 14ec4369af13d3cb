// The agent-run cases (--only agent-runs): agents without tools, documents or memory run against a
// fake OpenAI-compatible model answering at once (scripts/bench/fake-model.ts). Invoke throughput
// vs plain node:http making the same upstream call and writing the same run row; time to the first
// token of a streamed run vs asking the model directly; GET /agents/{id} at 1,000/s offered, idle
// vs 100 open streams.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPTS, fmt, log, median, percentile, round } from '../options.js';
import { seedAgents } from '../seed.js';
import { memoryOf, startHelper, startReference, type Proc } from '../processes.js';
import { bearer, compare, jsonHeaders, measure, openStreams, paced, probe, timeToFirstToken, waitIdle, type Load } from '../load.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';

/** In the input of an agent run, asks the fake model to hold its stream open after the first token. */
const HOLD_MARKER = 'bench-hold-the-stream';
/** The open-streams case: GET /agents/{id} offered at `rate` a second beside `streams` held streams. */
const rate = 1000;
const streams = 100;

const THROUGHPUT = 'invoke ≥ 0.5 of a plain script making the same upstream call (req/s, median of rounds)';
const FIRST_TOKEN = 'streamed run: time-to-first-token overhead ≤ 2 ms p50 (over calling the fake model directly)';
const OPEN_STREAMS = `${streams} open streams: GET /agents/{id} p99 within 2× of idle (at ${fmt(rate)} req/s offered)`;

export const agentRuns: OwnCase = {
  name: 'agent-runs',
  uses: 'own servers',
  targets: [THROUGHPUT, FIRST_TOKEN, OPEN_STREAMS],
  run,
};

async function run(ctx: BenchContext): Promise<CaseReport> {
  // 50 users, each with 10 agents without tools, documents or memory; the even ones have a
  // prompt with two variables. Every server on its own copy; all call one fake model.
  const plan = Array.from({ length: 50 }, () => ({ agents: 10, tokens: 1, tags: 2, prompts: 1, documents: 0, tools: 0 }));
  const seeded = seedAgents(join(ctx.dir, 'runs.db'), plan, ctx.passwordHash);
  const plainDb = seeded.path.replace(/\.db$/, '-plain.db');
  copyFileSync(seeded.path, plainDb);
  const fake = await startHelper('fake model', 'scripts/bench/fake-model.ts', { HOLD_MARKER });
  const modelEnv = { OPENAI_BASE_URL: `${fake.url}/v1` };
  // The operator's endpoint (no SSRF check needed, allowed anyway as a home server would), and
  // enough runs at once per user that 50 connections and 100 streams are never answered 429.
  // With the loop monitor, for the open-streams case's table of stalls.
  const svc = await ctx.service('service (agent runs)', seeded.path, {
    nodeArgs: ctx.profileArgs,
    monitor: true,
    env: { ...modelEnv, ALLOW_PRIVATE_NETWORKS: 'on', RUN_CONCURRENCY_PER_USER: '1000' },
  });
  const plain = await startReference('plain', 'plain', plainDb, modelEnv);
  const invokeBody = { input: 'What does the leave policy say about parental leave?', variables: { who: 'the team', language: 'English' } };
  const invokes = (extra: object) =>
    seeded.users.flatMap((user) =>
      user.agents
        .filter((_, j) => j % 2 === 0)
        .map((id) => ({
          method: 'POST',
          path: `/api/v1/agents/${id}/invoke`,
          headers: jsonHeaders(user.tokens[0]),
          body: JSON.stringify({ ...invokeBody, ...extra }),
        })),
    );
  const invoke: Load = { expectStatus: 200, requests: invokes({}) };
  const streamed = invokes({ stream: true });
  const held = invokes({ stream: true, input: `${invokeBody.input} (${HOLD_MARKER})` });
  const direct = {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: JSON.stringify({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Say hello to the team in English.' },
        { role: 'user', content: invokeBody.input },
      ],
    }),
  };
  const getAgent: Load = {
    expectStatus: 200,
    requests: seeded.users.flatMap((user) =>
      user.agents.map((id) => ({ method: 'GET', path: `/api/v1/agents/${id}`, headers: bearer(user.tokens[0]) })),
    ),
  };
  for (const proc of [svc, plain]) await probe(proc, invoke.requests[0], 200);
  const runs: Record<string, unknown> = {};
  const targets: Target[] = [];

  // 1. Throughput, closed loop, service vs plain node:http.
  const throughput = await compare(
    'agent-runs',
    'POST /agents/{id}/invoke, plain JSON (fake model answering at once)',
    [svc, plain],
    (proc, s) => measure(proc, invoke, s),
  );
  runs.throughput = { ratio: throughput.ratios.plain, sides: throughput.sides.map(({ rounds, ...side }) => side) };
  targets.push({
    target: THROUGHPUT,
    measured:
      `${throughput.ratios.plain.median} (rounds ${throughput.ratios.plain.spread.join('–')}), by CPU per request ${throughput.ratios.plain.cpu}; ` +
      `${fmt(throughput.sides[0].rps)} vs ${fmt(throughput.sides[1].rps)} req/s` +
      (throughput.problems.length ? `; ${throughput.problems.join('; ')}` : ''),
    pass: throughput.problems.length === 0 && throughput.ratios.plain.median >= 0.5,
  });

  // 2. Time to first token, one streamed request at a time: the service's first `token` event vs
  // the fake model's first content chunk, asked directly.
  const seconds = Math.max(OPTS.duration, OPTS.quick ? 2 : 5);
  let next = 0;
  const ttft = await compare(
    'agent-runs',
    'streamed invoke, one at a time: time to first token (ms; req/s = streams a second)',
    [svc, fake],
    (proc, s) =>
      proc === fake
        ? timeToFirstToken(fake, direct, 'model-chunk', s)
        : timeToFirstToken(svc, streamed[next++ % streamed.length], 'token-event', s),
    { seconds },
  );
  const [ttftService, ttftDirect] = ttft.raw;
  const overheads = ttftService.map((r, k) => round(r.p50 - ttftDirect[k].p50, 2));
  const overhead = round(median(overheads), 2);
  runs.timeToFirstToken = { overheadP50Ms: overhead, perRound: overheads, service: ttft.sides[0], direct: ttft.sides[1] };
  targets.push({
    target: FIRST_TOKEN,
    measured:
      `${fmt(overhead, 2)} ms (rounds ${fmt(Math.min(...overheads), 2)}–${fmt(Math.max(...overheads), 2)}): p50 ${fmt(ttft.sides[0].p50, 2)} vs ${fmt(ttft.sides[1].p50, 2)} ms, p99 ${fmt(ttft.sides[0].p99, 2)} vs ${fmt(ttft.sides[1].p99, 2)} ms` +
      (ttft.problems.length ? `; ${ttft.problems.join('; ')}` : ''),
    pass: ttft.problems.length === 0 && overhead <= 2,
  });

  // 3. GET /agents/{id} at a fixed offered rate (open loop), idle vs while 100 streamed runs are
  // held open by the fake model; alternating round by round on the same server.
  const idle: Proc = { ...svc, name: 'idle' };
  const busy: Proc = { ...svc, name: `${streams} open streams` };
  const firstTokens: number[] = [];
  const openCase = await compare(
    'agent-runs',
    `GET /agents/{id} at ${fmt(rate)}/s offered (open loop): idle vs ${streams} open streamed runs`,
    [busy, idle],
    async (proc, s) => {
      if (proc === idle) return paced(svc, getAgent, rate, s);
      const open = await openStreams(
        svc,
        Array.from({ length: streams }, (_, k) => held[k % held.length]),
      );
      firstTokens.push(...open.firstTokenMs);
      // Measured once the opening is over: the cost of streams being open, not of starting 100 runs.
      await waitIdle(svc.pid);
      try {
        return await paced(svc, getAgent, rate, s);
      } finally {
        await open.close();
      }
    },
    { seconds, settle: 0, rounds: OPTS.openLoopRounds },
  ); // paced() settles each run itself
  const [withStreams, idleRounds] = openCase.raw;
  const idleP99 = median(idleRounds.map((r) => r.p99));
  const busyP99 = median(withStreams.map((r) => r.p99));
  const perRound = withStreams.map((r, k) => round(r.p99 / idleRounds[k].p99, 2));
  firstTokens.sort((a, b) => a - b);
  runs.openStreams = {
    rate,
    streams,
    idleP99,
    busyP99,
    perRound,
    heldFirstTokenP50: round(percentile(firstTokens, 50), 2),
    heldFirstTokenMax: round(firstTokens.at(-1) ?? NaN, 2),
  };
  targets.push({
    target: OPEN_STREAMS,
    measured:
      `${fmt(busyP99, 2)} ms vs ${fmt(idleP99, 2)} ms idle (${fmt(busyP99 / idleP99, 2)}×; rounds ${perRound.join(', ')}); ` +
      `the ${streams} streams had their first token after ${fmt(percentile(firstTokens, 50), 1)} ms (median), ${fmt(firstTokens.at(-1) ?? NaN, 1)} ms (slowest)` +
      (openCase.problems.length ? `; ${openCase.problems.join('; ')}` : ''),
    pass: openCase.problems.length === 0 && busyP99 <= 2 * idleP99,
  });
  for (const problem of [...throughput.problems, ...ttft.problems, ...openCase.problems]) log(`⚠ agent runs: ${problem}`);

  runs.memory = Object.fromEntries([svc, plain, fake].map((p) => [p.name, memoryOf(p.pid)]));
  await ctx.stop(svc);
  await ctx.stop(plain);
  await ctx.stop(fake);
  if (OPTS.cpuProf) ctx.summariseProfileOf(svc);
  return { rows: [throughput, ttft, openCase], targets, results: { agentRuns: runs } };
}
