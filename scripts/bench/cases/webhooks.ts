// Webhooks (--only webhooks): runs of two users end in turn, one with a webhook on `*`, one without
// (scripts/bench/webhook-runs.ts, in a child process, times each end's commit). The commit of an
// end with the webhook's outbox row vs without, and how long after its run's end each delivery
// reaches a receiver on 127.0.0.1 (this process, otherwise idle meanwhile; it notes the arrival and
// reads the run's finishedAt from the payload).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { OPTS, fmt, log, median, percentile, round } from '../options.js';
import { seedAgents } from '../seed.js';
import { webhookRunsInChild } from '../processes.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';

const RUNS = 1000;
/** Measured pairs are cut into this many rounds; the ratio is the median of the rounds' ratios of medians. */
const ROUNDS = 10;

const COMMIT = `${fmt(RUNS)} runs ending with a webhook on \`*\`: the end's commit within 1.2× of a user's without webhooks (median)`;
const DELIVERY = "every delivery reaches a receiver on 127.0.0.1 within 5 s of its run's end (p99)";

export const webhooks: OwnCase = {
  name: 'webhooks',
  uses: 'own servers',
  targets: [COMMIT, DELIVERY],
  run,
};

/** The time on this machine's clock, as the service writes finishedAt (ms since the epoch). */
const now = () => performance.timeOrigin + performance.now();

async function run(ctx: BenchContext): Promise<CaseReport> {
  const runs = OPTS.quick ? 100 : RUNS;
  const warmup = OPTS.quick ? 10 : 100;
  const seeded = seedAgents(
    join(ctx.dir, 'webhooks.db'),
    Array.from({ length: 2 }, () => ({ agents: 1, tokens: 1, tags: 0, prompts: 0, documents: 0, tools: 0 })),
    ctx.passwordHash,
  );

  // The receiver: every POST answered 204 at once, its webhook-id and lag noted.
  const arrivals = new Map<string, { lagMs: number; count: number }>();
  let unreadable = 0;
  const receiver = createServer((req: IncomingMessage, res) => {
    const arrived = now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(204).end();
      const id = req.headers['webhook-id'];
      const finishedAt = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { finishedAt?: string } }).data?.finishedAt;
      if (typeof id !== 'string' || typeof finishedAt !== 'string') return void (unreadable += 1);
      const seen = arrivals.get(id);
      if (seen) seen.count += 1;
      else arrivals.set(id, { lagMs: arrived - Date.parse(finishedAt), count: 1 });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  log(`webhooks: ${runs} runs ending per user after ${warmup} of warm-up, one user with a webhook on * sent to ${receiverUrl}`);
  const outcome = await webhookRunsInChild({ path: seeded.path, receiverUrl, runs, warmup }, seeded.users);
  await new Promise<void>((resolve) => receiver.close(() => resolve()));

  const perRound = Math.max(1, Math.floor(runs / ROUNDS));
  /** The median over rounds of each round's median with ÷ median without, and the rounds' ratios. */
  const ratioOf = (withWebhook: number[], without: number[]) => {
    const ratios: number[] = [];
    for (let r = 0; r + perRound <= runs; r += perRound)
      ratios.push(round(median(withWebhook.slice(r, r + perRound)) / median(without.slice(r, r + perRound)), 2));
    return { ratio: round(median(ratios), 2), ratios };
  };
  const { ratio, ratios } = ratioOf(outcome.withWebhookMs, outcome.withoutMs);
  const cpu = ratioOf(outcome.cpuWithWebhookUs, outcome.cpuWithoutUs);
  const [cpuWith, cpuWithout] = [median(outcome.cpuWithWebhookUs), median(outcome.cpuWithoutUs)];
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const [withMs, withoutMs] = [sorted(outcome.withWebhookMs), sorted(outcome.withoutMs)];
  const lags = sorted([...arrivals.values()].map((a) => a.lagMs));
  const duplicates = [...arrivals.values()].filter((a) => a.count > 1).length;
  const missing = outcome.deliveriesExpected - arrivals.size;
  const problems = [
    ...(missing > 0 ? [`${missing} of ${outcome.deliveriesExpected} deliveries never arrived`] : []),
    ...(outcome.allSent ? [] : ['deliveries were still pending 60 s after the last run']),
    ...(unreadable > 0 ? [`${unreadable} deliveries without a webhook-id or finishedAt`] : []),
  ];
  for (const problem of problems) log(`⚠ webhooks: ${problem}`);

  const ms = (x: number) => fmt(x, 2);
  const targets: Target[] = [
    {
      target: COMMIT,
      measured:
        `${fmt(ratio, 2)}× (rounds of ${perRound} pairs ${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}): ` +
        `p50 ${ms(percentile(withMs, 50))} vs ${ms(percentile(withoutMs, 50))} ms, p99 ${ms(percentile(withMs, 99))} vs ${ms(percentile(withoutMs, 99))} ms; ` +
        `the end's CPU without waiting for the disk ${fmt(cpuWith)} vs ${fmt(cpuWithout)} µs (${fmt(cpu.ratio, 2)}×)`,
      pass: ratio <= 1.2,
    },
    {
      target: DELIVERY,
      measured:
        `p99 ${ms(percentile(lags, 99))} ms (p50 ${ms(percentile(lags, 50))}, slowest ${ms(lags.at(-1) ?? NaN)}); ` +
        `${fmt(arrivals.size)} of ${fmt(outcome.deliveriesExpected)} arrived${duplicates ? `, ${duplicates} twice` : ''}` +
        (problems.length ? `; ${problems.join('; ')}` : ''),
      pass: problems.length === 0 && percentile(lags, 99) <= 5000,
    },
  ];
  return {
    targets,
    results: {
      webhooks: {
        runs,
        warmup,
        commitRatio: ratio,
        commitRatioRounds: ratios,
        cpuOfEndUs: { withWebhook: cpuWith, without: cpuWithout, ratio: cpu.ratio, rounds: cpu.ratios },
        commitMs: {
          withWebhook: { p50: round(percentile(withMs, 50), 3), p99: round(percentile(withMs, 99), 3) },
          without: { p50: round(percentile(withoutMs, 50), 3), p99: round(percentile(withoutMs, 99), 3) },
        },
        deliveryLagMs: { p50: round(percentile(lags, 50), 1), p99: round(percentile(lags, 99), 1), max: round(lags.at(-1) ?? NaN, 1) },
        delivered: arrivals.size,
        expected: outcome.deliveriesExpected,
        duplicates,
      },
    },
  };
}
