// The JSON shape of a tool: never its metadata (it holds secrets); a kind that sends headers may
// say whether it has them (`hasHeaders`).
import type { Caller } from '../http/context.js';
import { presentUser } from '../users/present.js';
import { kindOf } from './kinds/index.js';
import type { Tool } from './schema.js';
import type { ToolRow } from './store.js';

/** A tool with its owner as the nested `user`. */
export function presentTool(tool: ToolRow, owner: Caller): Tool {
  return {
    id: tool.id,
    userId: tool.userId,
    user: presentUser(owner),
    name: tool.name,
    type: tool.type,
    description: tool.description,
    ...(kindOf(tool.type)?.showsHasHeaders ? { hasHeaders: tool.hasHeaders } : {}),
    createdAt: tool.createdAt,
    updatedAt: tool.updatedAt,
  };
}
