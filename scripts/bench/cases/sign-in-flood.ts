// The sign-in-flood case (--only sign-in-flood): a legitimate sign-in, four times a second, while
// 50 connections flood the service with wrong passwords from ever new addresses (as a botnet would,
// so that no per-address limit trips). Each legitimate sign-in must be answered, with 200 or with
// 503 and Retry-After, within 2 s.
import { join } from 'node:path';
import { OPTS, PASSWORD, fmt, median, round, sleep } from '../options.js';
import { seedAgents } from '../seed.js';
import { runLoad, waitIdle, type Load } from '../load.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';

const TARGET = 'sign-in during a flood from many addresses: 200 or 503 + Retry-After within 2 s';

export const signInFlood: OwnCase = {
  name: 'sign-in-flood',
  uses: 'own servers',
  targets: [TARGET],
  run,
};

async function run(ctx: BenchContext): Promise<CaseReport> {
  const plan = [{ agents: 0, tokens: 0, tags: 0, prompts: 0, documents: 0, tools: 0 }];
  const seeded = seedAgents(join(ctx.dir, 'flood.db'), plan, ctx.passwordHash);
  // Behind a proxy (TRUST_PROXY=on), every flood request from another address: the per-address
  // limit never trips, as with a botnet. Unknown emails are hashed too (against a decoy).
  const svc = await ctx.service('service (sign-in flood)', seeded.path, { env: { RATE_LIMIT: 'on', TRUST_PROXY: 'on' } });
  const flood: Load = {
    expectStatus: 401,
    connections: 50,
    requests: Array.from({ length: 5000 }, (_, k) => ({
      method: 'POST',
      path: '/api/v1/auth/sign-in',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}` },
      body: JSON.stringify({ email: `flood-${k}@example.com`, password: 'guess' }),
    })),
  };
  const seconds = OPTS.quick ? 5 : 15;
  const background = runLoad(svc, flood, seconds + 120, false);
  await sleep(1000);
  const attempts: { ms: number; status: number; retryAfter: string | null }[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 30_000);
    try {
      const response = await fetch(`${svc.url}/api/v1/auth/sign-in`, {
        method: 'POST',
        signal: controller.signal,
        // Each attempt is another person at another address: one address signing in four times a
        // second would meet the per-address limit (429), which is not what this case measures.
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `192.0.2.${(attempts.length % 250) + 1}` },
        body: JSON.stringify({ email: seeded.users[0].email, password: PASSWORD }),
      });
      await response.arrayBuffer();
      attempts.push({ ms: round(performance.now() - started), status: response.status, retryAfter: response.headers.get('retry-after') });
    } catch {
      attempts.push({ ms: round(performance.now() - started), status: 0, retryAfter: null });
    } finally {
      clearTimeout(timer);
    }
    await sleep(250);
  }
  background.instance.stop();
  const floodResult = await background.done;
  await waitIdle(svc.pid, 120_000);
  await ctx.stop(svc);
  const worst = Math.max(...attempts.map((a) => a.ms));
  const answered = attempts.every((a) => a.status === 200 || (a.status === 503 && a.retryAfter !== null));
  const statuses = [...new Set(attempts.map((a) => a.status))].join(', ');
  const record = { attempts, flood: { perSecond: floodResult.rps, p50: floodResult.p50, p99: floodResult.p99, other: floodResult.non2xx } };
  const target: Target = {
    target: TARGET,
    measured: `${attempts.length} legitimate sign-ins: slowest ${fmt(worst)} ms, median ${fmt(median(attempts.map((a) => a.ms)))} ms, statuses ${statuses}; flood ${fmt(floodResult.rps, 1)} answers/s over 50 connections`,
    pass: answered && worst <= 2000,
  };
  return { targets: [target], results: { signInFlood: record } };
}
