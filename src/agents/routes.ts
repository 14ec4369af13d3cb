// `/agents`: language-model agents with their llm setting, prompt, document and tags.
import { resourceRoutes } from '../http/resource-routes.js';
import { presentAgent } from './present.js';
import { AgentSchema, CreateAgentSchema, UpdateAgentSchema } from './schema.js';
import type { AgentStore } from './store.js';

export function agentRoutes({ agents }: { agents: AgentStore }) {
  return resourceRoutes({
    path: '/agents',
    tag: 'Agents',
    names: { one: 'agent', One: 'Agent', Many: 'Agents', what: 'Agent' },
    schema: AgentSchema,
    present: presentAgent,
    store: agents,
    create: { body: CreateAgentSchema },
    update: { body: UpdateAgentSchema },
    delete: { answers: 'null', description: 'Its links are deleted too.' },
  });
}
