// The post-tool case (--only post-tool): POST /tools (a tool with a secret, sealed before it is
// stored), closed loop on the shared servers; the service should answer at least 0.90 of bare Koa's req/s.
import { bareKoaTarget, closedLoop, postToolLoad } from '../shared-servers.js';
import type { SharedCase } from '../case.js';

const TARGET = 'POST /tools ≥ 0.90 of bare Koa req/s (median of rounds)';

export const postTool: SharedCase = {
  name: 'post-tool',
  uses: 'shared servers',
  targets: [TARGET],
  async run({ main, servers }) {
    const result = await closedLoop(servers, 'post-tool', 'POST /tools', postToolLoad(main));
    return { rows: [result], targets: [bareKoaTarget(TARGET, result)] };
  },
};
