// The post-agent case (--only post-agent): POST /agents with two tags, a prompt and a model key
// (sealed), closed loop on the shared servers.
import { jsonHeaders, type Load } from '../load.js';
import { closedLoop } from '../shared-servers.js';
import type { SharedCase } from '../case.js';

export const postAgent: SharedCase = {
  name: 'post-agent',
  uses: 'shared servers',
  targets: [],
  async run({ main, servers }) {
    const load: Load = {
      expectStatus: 201,
      requests: main.users.map((user) => ({
        method: 'POST',
        path: '/api/v1/agents',
        headers: jsonHeaders(user.tokens[0]),
        body: JSON.stringify({
          name: 'bench agent',
          type: 'REACT',
          llm: { model: 'gpt-4o', provider: 'openai', apiKey: 'sk-bench' },
          hasMemory: true,
          promptId: user.prompts[0],
          tags: [user.tags[0], user.tags[1]],
        }),
      })),
    };
    return { rows: [await closedLoop(servers, 'post-agent', 'POST /agents (2 tags, prompt)', load)] };
  },
};
