// `/agents`: language-model agents with their llm setting, prompt, document and tags; and the
// public library of listed agents.
import { defineRoute, type Route } from '../http/route.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { ListQuerySchema, pageRequest } from '../http/validate.js';
import { presentAgent, presentLibraryAgent } from './present.js';
import { AgentSchema, CreateAgentSchema, LibraryAgentSchema, UpdateAgentSchema } from './schema.js';
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

/** `GET /agents/library`: the one read across users. Mount it before `GET /agents/:id`. */
export function libraryRoute({ agents }: { agents: AgentStore }): Route {
  return defineRoute({
    method: 'get',
    path: '/agents/library',
    operationId: 'listLibraryAgents',
    summary: 'List the public agent library',
    description:
      "Agents their owners listed (`isListed: true`), every user's, oldest first: only `id, name, description, avatarUrl, type, llm { model, provider }` — never prompts, keys, base URLs, documents or tools.",
    tag: 'Agents',
    auth: true,
    query: ListQuerySchema,
    success: { status: 200, description: 'A page of listed agents.', page: LibraryAgentSchema },
    handler: ({ query }) => {
      const page = agents.listLibrary(pageRequest(query, (id) => agents.seqOfListed(id)));
      return { rows: page.rows.map(presentLibraryAgent), hasMore: page.hasMore };
    },
  });
}
