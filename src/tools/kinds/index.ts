// Every tool kind the service can run, one line each, in the order the API lists the types. A new
// kind is a file beside this one and a line here.
import { agent } from './agent.js';
import type { ToolKind } from './kind.js';
import { mcp } from './mcp.js';
import { openApi } from './openapi.js';
import { automationNla, engineAlpha, hostedModel } from './plain-http.js';
import { search } from './search.js';

export const TOOL_KINDS = [search, engineAlpha, hostedModel, automationNla, agent, openApi, mcp] as const;

/** The `type` of a tool: one of the kinds'. */
export type ToolType = (typeof TOOL_KINDS)[number]['type'];

export const TOOL_TYPES: readonly ToolType[] = TOOL_KINDS.map((kind) => kind.type);

const byType = new Map<string, ToolKind>(TOOL_KINDS.map((kind) => [kind.type, kind]));

/** The kind of `type`, or undefined for a type this service does not know. */
export const kindOf = (type: string): ToolKind | undefined => byType.get(type);
