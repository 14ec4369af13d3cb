// The get-agent case (--only get-agent): GET /agents/{id}, closed loop on the shared servers; the
// service should answer at least 0.90 of bare Koa's req/s.
import { OPTS, median, round } from '../options.js';
import { bareKoaTarget, closedLoop, getAgentLoad } from '../shared-servers.js';
import type { SharedCase } from '../case.js';

const TARGET = 'GET /agents/{id} ≥ 0.90 of bare Koa req/s (median of rounds)';

export const getAgent: SharedCase = {
  name: 'get-agent',
  uses: 'shared servers',
  targets: [TARGET],
  async run({ main, servers }) {
    const result = await closedLoop(servers, 'get-agent', 'GET /agents/{id}', getAgentLoad(main));
    const cores = (rounds: { serverCores: number | null }[]) => round(median(rounds.map((r) => r.serverCores ?? NaN)), 2);
    const note =
      `CPU of the server during GET /agents/{id}: ${result.sides.map((s) => `${s.name} ${cores(s.rounds)} cores`).join(', ')}; ` +
      `with ${OPTS.connections} connections always busy, mean latency is ${OPTS.connections} ÷ req/s.`;
    return { rows: [result], targets: [bareKoaTarget(TARGET, result)], notes: [note] };
  },
};
