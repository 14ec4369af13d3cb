// Child runs: an agent calling another of its user's agents (the AGENT tool). A child is recorded
// with its parent's id, runs without memory, outside the concurrency limit, under its parent's
// deadline and signal, at most MAX_DEPTH deep and never in a loop of agents. A child that waits for
// approval makes its call wait (ToolCallWaits), and is taken up again from inside that call once
// the calls are answered (`resume`).
import type { AgentStore, RunAgent } from '../agents/store.js';
import { RunFailure } from './failures.js';
import type { ParentRun } from './prepare.js';
import type { ExecuteOptions, PreparedRun, ReopenedRun, RunChains, RunOutcome, RunRequest } from './run.js';
import type { Admission, RunSlots } from './slots.js';
import { ToolCallWaits, type ToolCallContext } from '../lib/tool-contract.js';
import { endWaitingChain, type Decision, type PausedState } from './approval.js';
import type { RunStore } from './store.js';
import type { RunInfo } from './events.js';

/** How deep agents may call agents (a top-level run is depth 0). */
export const MAX_DEPTH = 3;

export interface ChildRunDeps {
  agents: AgentStore;
  runs: RunStore;
  slots: RunSlots;
  chains: RunChains;
  begin(userId: string, agent: RunAgent, request: RunRequest, admission: Admission, parent: ParentRun): Promise<PreparedRun>;
  execute(prepared: PreparedRun, options?: ExecuteOptions): Promise<RunOutcome>;
  reopen(userId: string, agent: RunAgent, run: ReopenedRun, admission: Admission): Promise<PreparedRun>;
  /** Ends the log of a run taken up that could not go on: whoever follows it since is told. */
  endLog(run: RunInfo, failure: RunFailure): void;
}

/** A child's end as its caller's tool sees it: the answer, a wait, or an Error to tell the model. */
function answerOf(agent: RunAgent, outcome: RunOutcome): string {
  if (outcome.ok) return outcome.result.output;
  if (outcome.waiting) throw new ToolCallWaits(outcome.runId, agent.id, outcome.waiting.actions);
  throw new Error(`The agent "${agent.name}" failed: ${outcome.failure.message}`);
}

export function createChildRuns({ agents, runs, slots, chains, begin, execute, reopen, endLog }: ChildRunDeps) {
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
    return answerOf(agent, await execute(prepared));
  }

  /**
   * Takes up the child run `runId` that waited for approval, its calls answered by `decisions`,
   * under its caller's deadline and signal again: resolves or rejects as `runChildAgent`.
   */
  async function resumeChildAgent(parent: ToolCallContext, runId: string, decisions: Map<string, Decision>): Promise<string> {
    const run = runs.getRun(parent.userId, runId);
    const state = runs.stateOf(runId) as PausedState | undefined;
    if (!run || !state || !runs.markRunning(runId)) {
      throw new Error('The nested agent run no longer waits (it was cancelled or expired), so it has no answer.');
    }
    const agent = agents.getForRun(parent.userId, run.agentId);
    let prepared: PreparedRun;
    try {
      if (!agent) throw new RunFailure('not_found', 'The agent this tool calls no longer exists.');
      const admission = slots.admit(null, parent.deadline, parent.signal);
      prepared = await reopen(
        parent.userId,
        agent,
        {
          runId,
          sessionId: run.sessionId,
          input: run.input,
          parentRunId: parent.runId,
          depth: state.depth,
          remembers: false,
          sampling: state.sampling,
        },
        admission,
      );
    } catch (error) {
      const failure = error instanceof RunFailure ? error : new RunFailure('internal', 'The nested run could not go on.');
      endWaitingChain(runs, runId, failure.code === 'cancelled' ? 'cancelled' : 'failed', failure.message, failure.code, state);
      endLog({ runId, userId: parent.userId, agentId: run.agentId, parentRunId: parent.runId }, failure);
      throw new Error(`The agent "${agent?.name ?? run.agentId}" cannot go on: ${failure.message}`);
    }
    return answerOf(agent, await execute(prepared, { resume: { state, decisions } }));
  }

  return { runChildAgent, resumeChildAgent };
}
