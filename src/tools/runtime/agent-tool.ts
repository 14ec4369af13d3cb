// AGENT tools: another of the caller's agents, asked with `{ query }` and run as a nested run of
// its own. Nesting is bounded (at most MAX_AGENT_DEPTH runs below the invoked one) and an agent
// never calls itself or one of the agents already running above it: that comes back to the model
// as the tool's error, not as a failed run.
import type { RunTool } from '../../runs/tool-types.js';
import { ToolError, type MetadataResult } from './http-call.js';
import { defaultDescription } from './naming.js';
import { stringArgument, type ToolRecord } from './web-tools.js';

/** How deep nested agent runs go: the invoked run is depth 0, its AGENT calls depth 1, … up to this. */
export const MAX_AGENT_DEPTH = 3;

/** An agent in the chain of runs: who called whom. */
export interface AgentRef {
  id: string;
  name: string;
}

/** What the run engine needs to start a nested run. */
export interface ChildRunRequest {
  userId: string;
  agentId: string;
  input: string;
  parentRunId: string;
  /** Depth of the new run (its parent's + 1). */
  depth: number;
  /** The agents of the runs above the new one, outermost first; the new run's tools need them. */
  ancestors: AgentRef[];
  deadline: number;
  signal: AbortSignal;
}

/** Runs an agent as a nested run and answers its output; throws an Error with a safe message when that run fails. */
export type RunChildAgent = (request: ChildRunRequest) => Promise<string>;

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
  options: { findAgent: (agentId: string) => AgentRef | undefined; runChild: RunChildAgent; ancestors: AgentRef[] },
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
      async call(args, context) {
        const query = stringArgument(args, 'query');
        if (options.ancestors.some((agent) => agent.id === target.id)) {
          const chain = [...options.ancestors, target].map((agent) => `"${agent.name}"`).join(' → ');
          throw new ToolError(`refused: calling "${target.name}" would make a cycle (${chain}); an agent cannot call itself or an agent that is already calling it`);
        }
        if (context.depth + 1 > MAX_AGENT_DEPTH) {
          throw new ToolError(`refused: agents may call other agents at most ${MAX_AGENT_DEPTH} levels deep`);
        }
        return options.runChild({
          userId: context.userId,
          agentId: target.id,
          input: query,
          parentRunId: context.runId,
          depth: context.depth + 1,
          ancestors: options.ancestors,
          deadline: context.deadline,
          signal: context.signal,
        });
      },
    },
  };
}
