// Child runs: an agent calling another of its user's agents (the AGENT tool). A child is recorded
// with its parent's id, runs without memory, outside the concurrency limit, under its parent's
// deadline and signal, at most MAX_DEPTH deep and never in a loop of agents.
import type { AgentStore, RunAgent } from '../agents/store.js';
import { RunFailure } from './failures.js';
import type { ParentRun } from './prepare.js';
import type { ExecuteOptions, PreparedRun, RunChains, RunOutcome, RunRequest } from './run.js';
import type { Admission, RunSlots } from './slots.js';
import type { ToolCallContext } from '../lib/tool-contract.js';

/** How deep agents may call agents (a top-level run is depth 0). */
export const MAX_DEPTH = 3;

export interface ChildRunDeps {
  agents: AgentStore;
  slots: RunSlots;
  chains: RunChains;
  begin(userId: string, agent: RunAgent, request: RunRequest, admission: Admission, parent: ParentRun): Promise<PreparedRun>;
  execute(prepared: PreparedRun, options?: ExecuteOptions): Promise<RunOutcome>;
}

export function createChildRuns({ agents, slots, chains, begin, execute }: ChildRunDeps) {
  /**
   * Runs another of the user's agents as a child of the run `parent` describes (the AGENT tool):
   * recorded with parentRunId, without memory, outside the concurrency limit, under the parent's
   * deadline and signal, at most MAX_DEPTH deep. Resolves with its answer; rejects with an Error
   * whose message is safe to give the model (missing agent, too deep, a cycle, the child's failure).
   */
  async function runChildAgent(parent: ToolCallContext, agentId: string, input: string): Promise<string> {
    if (parent.depth + 1 > MAX_DEPTH) throw new Error(`Agents may call agents at most ${MAX_DEPTH} deep.`);
    const chain: string[] = [];
    for (let runId: string | null = parent.runId; runId !== null; runId = chains.get(runId)?.parentRunId ?? null) {
      const run = chains.get(runId);
      if (!run) break;
      chain.push(run.agentId);
    }
    if (chain.includes(agentId)) throw new Error('That agent is already running in this chain of calls; calling it again would loop.');
    const agent = agents.getForRun(parent.userId, agentId);
    if (!agent) throw new Error('The agent this tool calls no longer exists.');
    let prepared: PreparedRun;
    try {
      const admission = slots.admit(null, parent.deadline, parent.signal);
      prepared = await begin(parent.userId, agent, { input, variables: {}, sessionId: null, stream: false }, admission, {
        runId: parent.runId,
        depth: parent.depth,
      });
    } catch (error) {
      if (!(error instanceof RunFailure)) throw error;
      if (error.code === 'not_found') throw new Error('The agent this tool calls no longer exists.');
      const details = error.details ?? [];
      throw new Error(`The agent "${agent.name}" cannot run: ${details.map((d) => `${d.path} ${d.message}`).join('; ') || error.message}`);
    }
    const outcome = await execute(prepared);
    if (outcome.ok) return outcome.result.output;
    throw new Error(`The agent "${agent.name}" failed: ${outcome.failure.message}`);
  }

  return runChildAgent;
}
