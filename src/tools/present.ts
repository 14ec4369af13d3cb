// The JSON shape of a tool: never its metadata (it holds secrets).
import type { Caller } from '../http/context.js';
import { presentUser } from '../users/present.js';
import type { ToolRow } from './store.js';

/** A tool; with `owner`, its nested `user` object (else `{}`, as nested links may show it). */
export function presentTool(tool: ToolRow, owner?: Caller) {
  return {
    id: tool.id,
    userId: tool.userId,
    user: owner ? presentUser(owner) : {},
    name: tool.name,
    type: tool.type,
    createdAt: tool.createdAt,
    updatedAt: tool.updatedAt,
  };
}
