// The OpenAI-compatible API (--only openai-api): the same agents as agent-runs (no tools, documents
// or memory, a fake model answering at once) run through /v1/chat/completions and /v1/responses
// against a plain and a streamed POST /agents/{id}/invoke on the same server. Plain throughput
// of each vs invoke's (closed loop), and time to the first token of each streamed vs invoke's.
import { join } from 'node:path';
import { OPTS, fmt, log, median, round } from '../options.js';
import { seedAgents } from '../seed.js';
import { startHelper, type Proc } from '../processes.js';
import { compare, jsonHeaders, measure, probe, timeToFirstToken, type Load } from '../load.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';

const CHAT_THROUGHPUT = '/v1/chat/completions plain: throughput ≥ 0.9 of /invoke (req/s, median of rounds)';
const CHAT_FIRST_TOKEN = '/v1/chat/completions streamed: time to first token within 1 ms (p50) of a streamed /invoke';
const RESPONSES_THROUGHPUT = '/v1/responses plain: throughput ≥ 0.9 of /invoke (req/s, median of rounds)';
const RESPONSES_FIRST_TOKEN = '/v1/responses streamed: time to first token within 1 ms (p50) of a streamed /invoke';

export const openaiApi: OwnCase = {
  name: 'openai-api',
  uses: 'own servers',
  targets: [CHAT_THROUGHPUT, CHAT_FIRST_TOKEN, RESPONSES_THROUGHPUT, RESPONSES_FIRST_TOKEN],
  run,
};

async function run(ctx: BenchContext): Promise<CaseReport> {
  // 50 users with 10 agents each, as agent-runs seeds them; the even agents have a prompt with two variables.
  const plan = Array.from({ length: 50 }, () => ({ agents: 10, tokens: 1, tags: 2, prompts: 1, documents: 0, tools: 0 }));
  const seeded = seedAgents(join(ctx.dir, 'openai.db'), plan, ctx.passwordHash);
  const fake = await startHelper('fake model', 'scripts/bench/fake-model.ts', {});
  const svc = await ctx.service('service (openai api)', seeded.path, {
    nodeArgs: ctx.profileArgs,
    env: { OPENAI_BASE_URL: `${fake.url}/v1`, ALLOW_PRIVATE_NETWORKS: 'on', RUN_CONCURRENCY_PER_USER: '1000' },
  });
  const input = 'What does the leave policy say about parental leave?';
  const variables = { who: 'the team', language: 'English' };
  /** One request per prompted agent of every user: `path` and `body` of the agent's id. */
  const requests = (path: (id: string) => string, body: (id: string) => object) =>
    seeded.users.flatMap((user) =>
      user.agents
        .filter((_, j) => j % 2 === 0)
        .map((id) => ({ method: 'POST', path: path(id), headers: jsonHeaders(user.tokens[0]), body: JSON.stringify(body(id)) })),
    );
  const invoke = (stream: boolean) =>
    requests(
      (id) => `/api/v1/agents/${id}/invoke`,
      () => ({ input, variables, stream }),
    );
  const chat = (stream: boolean) =>
    requests(
      () => '/v1/chat/completions',
      (id) => ({ model: id, messages: [{ role: 'user', content: input }], metadata: variables, stream }),
    );
  const responses = (stream: boolean) =>
    requests(
      () => '/v1/responses',
      (id) => ({ model: id, input, metadata: variables, stream }),
    );
  // The same server under three names, one per endpoint; the first of each comparison is the one measured against invoke.
  const as = (name: string): Proc => ({ ...svc, name });
  const [viaInvoke, viaChat, viaResponses] = [as('invoke'), as('chat completions'), as('responses')];
  const plain: Record<string, Load> = {
    [viaInvoke.name]: { expectStatus: 200, requests: invoke(false) },
    [viaChat.name]: { expectStatus: 200, requests: chat(false) },
    [viaResponses.name]: { expectStatus: 200, requests: responses(false) },
  };
  for (const load of Object.values(plain)) await probe(svc, load.requests[0], 200);
  const streamed = { [viaInvoke.name]: invoke(true), [viaChat.name]: chat(true), [viaResponses.name]: responses(true) };
  const kinds = { [viaInvoke.name]: 'token-event', [viaChat.name]: 'model-chunk', [viaResponses.name]: 'response-delta' } as const;
  const results: Record<string, unknown> = {};
  const targets: Target[] = [];
  const rows = [];
  const seconds = Math.max(OPTS.duration, OPTS.quick ? 2 : 5);

  for (const [side, throughputTarget, firstTokenTarget] of [
    [viaChat, CHAT_THROUGHPUT, CHAT_FIRST_TOKEN],
    [viaResponses, RESPONSES_THROUGHPUT, RESPONSES_FIRST_TOKEN],
  ] as const) {
    const throughput = await compare(
      'openai-api',
      `${side.name} vs invoke, plain JSON (fake model answering at once)`,
      [side, viaInvoke],
      (proc, s) => measure(proc, plain[proc.name], s),
    );
    const ratio = throughput.ratios[viaInvoke.name];
    targets.push({
      target: throughputTarget,
      measured:
        `${ratio.median} (rounds ${ratio.spread.join('–')}), by CPU per request ${ratio.cpu}; ` +
        `${fmt(throughput.sides[0].rps)} vs ${fmt(throughput.sides[1].rps)} req/s` +
        (throughput.problems.length ? `; ${throughput.problems.join('; ')}` : ''),
      pass: throughput.problems.length === 0 && ratio.median >= 0.9,
    });

    let next = 0;
    const ttft = await compare(
      'openai-api',
      `streamed ${side.name} vs streamed invoke, one at a time: time to first token (ms)`,
      [side, viaInvoke],
      (proc, s) => timeToFirstToken(svc, streamed[proc.name][next++ % streamed[proc.name].length], kinds[proc.name], s),
      { seconds },
    );
    const [mine, theirs] = ttft.raw;
    const differences = mine.map((r, k) => round(r.p50 - theirs[k].p50, 2));
    const difference = round(median(differences), 2);
    targets.push({
      target: firstTokenTarget,
      measured:
        `${fmt(difference, 2)} ms (rounds ${fmt(Math.min(...differences), 2)}–${fmt(Math.max(...differences), 2)}): ` +
        `p50 ${fmt(ttft.sides[0].p50, 2)} vs ${fmt(ttft.sides[1].p50, 2)} ms` +
        (ttft.problems.length ? `; ${ttft.problems.join('; ')}` : ''),
      pass: ttft.problems.length === 0 && difference <= 1,
    });
    results[side.name] = {
      throughputRatio: ratio,
      firstTokenDifferenceP50Ms: difference,
      perRound: differences,
    };
    rows.push(throughput, ttft);
    for (const problem of [...throughput.problems, ...ttft.problems]) log(`⚠ openai api: ${problem}`);
  }

  await ctx.stop(svc);
  await ctx.stop(fake);
  if (OPTS.cpuProf) ctx.summariseProfileOf(svc);
  return { rows, targets, results: { openaiApi: results } };
}
