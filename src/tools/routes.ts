// `/tools`: capabilities an agent can be given (linked through /agent-tools).
import { resourceRoutes } from '../http/resource-routes.js';
import { presentTool } from './present.js';
import { CreateToolSchema, ToolSchema, UpdateToolSchema } from './schema.js';
import type { ToolStore } from './store.js';

export function toolRoutes({ tools }: { tools: ToolStore }) {
  return resourceRoutes({
    path: '/tools',
    tag: 'Tools',
    names: { one: 'tool', One: 'Tool', Many: 'Tools', what: 'Tool' },
    schema: ToolSchema,
    present: presentTool,
    store: tools,
    create: {
      body: CreateToolSchema,
      description:
        '`metadata` is stored and never returned. What each type needs in it: `url` (and optional `headers`) for SEARCH and the plain HTTP types; ' +
        '`url` of an OpenAPI 3.x document or the document itself as `spec` for OPENAPI; `agentId` for AGENT, which must be one of the caller\'s agents (422 otherwise).',
    },
    update: { body: UpdateToolSchema, description: 'Checked as on create: an AGENT tool\'s `metadata.agentId` must be one of the caller\'s agents (422 otherwise).' },
    delete: { answers: 'null', description: "The tool's agent-tool links are deleted too." },
  });
}
