// The list-agents case (--only list-agents): how many SQL statements a page of GET /agents runs,
// counted in this process before the shared servers start (statements.ts), then GET /agents?limit=100,
// closed loop on the shared servers.
import { log } from '../options.js';
import { bearer, type Load } from '../load.js';
import { countStatements } from '../statements.js';
import { closedLoop } from '../shared-servers.js';
import type { SharedCase } from '../case.js';

const TARGET = 'GET /agents: the same number of SQL statements for any page size';

export const listAgents: SharedCase = {
  name: 'list-agents',
  uses: 'shared servers',
  targets: [TARGET],
  async beforeServers({ main }) {
    const statements = await countStatements(main.path, main.heavy[0]);
    log(`SQL statements per request: ${JSON.stringify(statements)}`);
    const first = ['GET /agents?limit=1', 'GET /agents?limit=10', 'GET /agents?limit=100'].map((k) => statements[k]);
    const after = ['GET /agents?limit=1&after=', 'GET /agents?limit=100&after='].map((k) => statements[k]);
    return {
      targets: [
        {
          target: TARGET,
          measured: `${first.join(' / ')} for pages of 1 / 10 / 100; ${after.join(' / ')} for 1 / 100 after a cursor`,
          pass: first.every((n) => n === first[0]) && after.every((n) => n === after[0]),
        },
      ],
      results: { statements },
    };
  },
  async run({ main, servers }) {
    // The first page and the second of each user with 200 agents.
    const load: Load = {
      expectStatus: 200,
      requests: main.heavy.flatMap((user) => [
        { method: 'GET', path: '/api/v1/agents?limit=100', headers: bearer(user.tokens[0]) },
        { method: 'GET', path: `/api/v1/agents?limit=100&after=${user.agents[99]}`, headers: bearer(user.tokens[0]) },
      ]),
    };
    return { rows: [await closedLoop(servers, 'list-agents', 'GET /agents?limit=100', load)] };
  },
};
