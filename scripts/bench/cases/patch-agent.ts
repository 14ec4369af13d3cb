// The patch-agent case (--only patch-agent): PATCH /agents/{id} (name and memory), closed loop on
// the shared servers.
import { jsonHeaders, type Load } from '../load.js';
import { closedLoop } from '../shared-servers.js';
import type { SharedCase } from '../case.js';

export const patchAgent: SharedCase = {
  name: 'patch-agent',
  uses: 'shared servers',
  targets: [],
  async run({ main, servers }) {
    const load: Load = {
      expectStatus: 200,
      requests: main.heavy.flatMap((user) =>
        user.agents.slice(100, 110).map((id) => ({
          method: 'PATCH',
          path: `/api/v1/agents/${id}`,
          headers: jsonHeaders(user.tokens[0]),
          body: JSON.stringify({ name: 'renamed agent', hasMemory: true }),
        })),
      ),
    };
    return { rows: [await closedLoop(servers, 'patch-agent', 'PATCH /agents/{id}', load)] };
  },
};
