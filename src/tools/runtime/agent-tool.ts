// AGENT tools: another of the caller's agents, asked with `{ query }` and run by the run engine as
// a nested run of its own (which bounds the depth and refuses a cycle: both come back to the
// model as the tool's error, not as a failed run).
import type { RunTool, ToolCallContext } from '../../runs/tool-types.js';
import type { MetadataResult } from './http-call.js';
import { defaultDescription } from './naming.js';
import { stringArgument, type ToolRecord } from './web-tools.js';

/** Runs an agent as a child of the calling run; answers its output, or throws an Error with a safe message. */
export type RunChildAgent = (parent: ToolCallContext, agentId: string, input: string) => Promise<string>;

const QUERY_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string', description: 'The question or task for the agent.' } },
  required: ['query'],
  additionalProperties: false,
};

/** The function of an AGENT tool, or why it cannot be offered (no agentId, or the agent is gone). */
export function agentTool(
  tool: ToolRecord,
  name: string,
  options: { findAgent: (agentId: string) => { id: string; name: string } | undefined; runChild: RunChildAgent },
): MetadataResult<RunTool> {
  const agentId = tool.metadata.agentId;
  if (typeof agentId !== 'string' || agentId === '') return { ok: false, reason: 'metadata.agentId is missing' };
  const target = options.findAgent(agentId);
  if (!target) return { ok: false, reason: 'the agent it calls (metadata.agentId) no longer exists' };
  return {
    ok: true,
    value: {
      name,
      description: tool.description || defaultDescription('AGENT', target.name),
      parameters: QUERY_SCHEMA,
      toolId: tool.id,
      toolName: tool.name,
      call: async (args, context) => options.runChild(context, target.id, stringArgument(args, 'query')),
    },
  };
}
