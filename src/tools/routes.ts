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
    create: { body: CreateToolSchema, description: '`metadata` is stored and never returned.' },
    update: { body: UpdateToolSchema },
    delete: { answers: 'null', description: "The tool's agent-tool links are deleted too." },
  });
}
