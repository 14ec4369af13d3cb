// The in-process case (--only in-process): GET /agents/{id} and POST /tools through the service's
// Koa app and the bare-Koa app in one process of their own, no network (scripts/bench/in-process.ts
// says how). It runs before the shared servers start, so that nothing else runs meanwhile.
import { log } from '../options.js';
import { inProcessInChild } from '../processes.js';
import type { SharedCase } from '../case.js';

export const inProcess: SharedCase = {
  name: 'in-process',
  uses: 'shared servers',
  targets: [],
  async beforeServers({ main }) {
    log('in process: the service app and the bare-Koa app, alternating');
    const rows = await inProcessInChild(main.copy('in-process'), main.users);
    for (const c of rows) log(`in process: ${c.title}: service ${c.serviceUs} µs, bare Koa ${c.bareUs} µs of CPU per request`);
    return { inProcessRows: rows, results: { inProcess: rows } };
  },
};
