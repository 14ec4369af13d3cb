// One tool call of a run: the model's arguments read as JSON, the function found, called, timed and
// recorded as a step, with `tool_call`/`tool_result` sent to a streamed client. A tool's failure
// is told to the model as its result (the run goes on); only the run being stopped is thrown.
// A run makes at most `maxCalls` calls: later ones are refused (not run, not recorded), and a call
// whose arguments pass MAX_TOOL_ARGUMENT_CHARS is refused with the beginning of them recorded.
// The calls of one model reply go through `callTools`: a call whose link asks for approval is not
// made, and once the others are, the run pauses (RunPaused, approval.ts); `settle` makes or
// denies them once a person answered.
import { boundToolOutput, MAX_TOOL_ARGUMENT_CHARS, refusedArguments, toolCallsOfRunRefused } from './bounds.js';
import { MAX_TOOL_ERROR_TEXT } from './failures.js';
import type { ToolCallRequest } from './messages.js';
import type { ToolCallResult } from './strategies.js';
import type { RunStep } from './store.js';
import { ToolCallWaits, type ToolFunction, type ToolCallContext } from '../lib/tool-contract.js';
import {
  addWaitingChild,
  childDecisions,
  deniedCall,
  noneWaiting,
  RunPaused,
  uniqueActionId,
  type Decision,
  type PausedBatch,
  type WaitingCall,
} from './approval.js';

export interface ToolCallEvents {
  toolCall(data: { id: string; tool: string; function: string; input: unknown }): void;
  toolResult(data: { id: string } & ToolCallResult): void;
}

export interface ToolCallLimits {
  maxCalls: number;
  warn(message: string): void;
  /** Calls the run made before it paused (a resumed run goes on counting). */
  made?: number;
  /** Ends a nested run that waits when its caller stops without it (see endWaitingChain). */
  endWaiting(runId: string): void;
}

/** How `callTool` makes one call. */
interface CallHow {
  /** Its `tool_call` was sent and it was counted when it first began (a nested run it waits on goes on). */
  begun?: boolean;
  /** Makes the call instead of the function itself. */
  invoke?: () => Promise<string>;
}

/** The run's tool calls: each is appended to `steps`; `warn` adds to the run's warnings. */
export function createToolCaller(
  tools: ToolFunction[],
  context: ToolCallContext,
  steps: RunStep[],
  events: ToolCallEvents,
  limits: ToolCallLimits,
) {
  let calls = limits.made ?? 0;

  /** The call as the model wrote it: its function, its arguments, and why it cannot be made (if so). */
  function read(call: ToolCallRequest) {
    const tool = tools.find((candidate) => candidate.name === call.name);
    const name = call.name.slice(0, 100); // a function that does not exist is named as the model wrote it, cut
    const tooLong = call.arguments.length > MAX_TOOL_ARGUMENT_CHARS;
    let input: unknown = tooLong ? refusedArguments(call.arguments) : call.arguments;
    try {
      if (!tooLong) input = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch {
      // kept as the text the model wrote
    }
    let problem: string | undefined;
    if (tooLong) problem = `The arguments are longer than ${MAX_TOOL_ARGUMENT_CHARS} characters; the call was not run.`;
    else if (!tool)
      problem = `There is no function named "${call.name.slice(0, 64)}"; use one of: ${tools.map((t) => t.name).join(', ') || 'none'}.`;
    else if (typeof input === 'string') problem = 'The arguments are not valid JSON; send a JSON object.';
    return { tool, name, input, problem };
  }

  function record(call: ToolCallRequest, seen: ReturnType<typeof read>, result: ToolCallResult, begun: number): ToolCallResult {
    const ms = Math.round(performance.now() - begun);
    steps.push({
      tool: seen.tool?.toolName ?? seen.name,
      toolId: seen.tool?.toolId ?? '',
      function: seen.name,
      input: seen.input,
      ...result,
      ms,
    });
    events.toolResult({ id: call.id, ...result });
    return result;
  }

  async function callTool(call: ToolCallRequest, how: CallHow = {}): Promise<ToolCallResult> {
    if (!how.begun) {
      if (calls >= limits.maxCalls) {
        limits.warn(toolCallsOfRunRefused(limits.maxCalls));
        return { error: `Refused: this run has made its ${limits.maxCalls} tool calls. Answer with what you have.` };
      }
      calls += 1;
    }
    const seen = read(call);
    const { tool, name, input, problem } = seen;
    const begun = performance.now();
    if (!how.begun) events.toolCall({ id: call.id, tool: tool?.toolName ?? name, function: name, input });
    let result: ToolCallResult;
    if (problem !== undefined && !how.invoke) {
      result = { error: problem };
    } else {
      try {
        result = { output: boundToolOutput(await (how.invoke ? how.invoke() : tool!.call(input, context))) };
      } catch (error) {
        // A nested run that waits is not a result: the call waits with it (no step yet).
        if (context.signal.aborted || error instanceof ToolCallWaits) throw error;
        result = { error: error instanceof Error && error.message ? error.message.slice(0, MAX_TOOL_ERROR_TEXT) : 'The tool failed.' };
      }
    }
    return record(call, seen, result, begun);
  }

  /** The function a call would make when it waits for approval (a call that cannot be made, or is refused, does not wait). */
  function asksApproval(call: ToolCallRequest) {
    const seen = read(call);
    return seen.problem === undefined && seen.tool?.requiresApproval === true && calls < limits.maxCalls ? seen : undefined;
  }

  /** A call the user denied: recorded and told to the model as such, not made. */
  function deny(call: ToolCallRequest, reason: string | undefined): ToolCallResult {
    const seen = read(call);
    const begun = performance.now();
    events.toolCall({ id: call.id, tool: seen.tool?.toolName ?? seen.name, function: seen.name, input: seen.input });
    return record(call, seen, { error: deniedCall(reason) }, begun);
  }

  /** The nested runs of `entries` still waiting are ended: their caller stops without them. */
  function abandon(entries: WaitingCall[]): void {
    for (const entry of entries) if (entry.kind === 'child') limits.endWaiting(entry.runId);
  }

  return {
    callTool,

    /** How many calls the run has made (for a pause). */
    made: () => calls,

    /**
     * Makes one model reply's calls in order, but those that wait for approval; when any waits (or
     * a nested run one started waits), throws RunPaused once the others are made. `memo` is kept
     * with the pause for the strategy to go on from.
     */
    async callTools(batch: ToolCallRequest[], memo: unknown): Promise<ToolCallResult[]> {
      const results: (ToolCallResult | null)[] = [];
      const waiting = noneWaiting();
      try {
        for (const [index, call] of batch.entries()) {
          const asks = asksApproval(call);
          if (asks) {
            const id = uniqueActionId(call.id, waiting.taken);
            waiting.entries.push({ index, kind: 'approval', actionId: id });
            waiting.actions.push({ id, tool: asks.tool!.toolName, function: asks.name, input: asks.input });
            results.push(null);
            continue;
          }
          try {
            results.push(await callTool(call));
          } catch (error) {
            if (!(error instanceof ToolCallWaits)) throw error;
            addWaitingChild(waiting, index, error);
            results.push(null);
          }
        }
      } catch (error) {
        abandon(waiting.entries);
        throw error;
      }
      if (waiting.entries.length > 0) throw new RunPaused({ calls: batch, results, waiting: waiting.entries, memo }, waiting.actions);
      return results as ToolCallResult[];
    },

    /**
     * Answers a paused batch's waiting calls as a person decided: approved ones are made, denied
     * ones told to the model as denied, and each nested run waited on goes on (`resumeChild`) —
     * its answer the call's result. Throws RunPaused again when a nested run waits anew.
     */
    async settle(
      batch: PausedBatch,
      decisions: Map<string, Decision>,
      resumeChild: (runId: string, decisions: Map<string, Decision>) => Promise<string>,
    ): Promise<ToolCallResult[]> {
      const results = [...batch.results];
      const waiting = noneWaiting();
      try {
        for (const entry of batch.waiting) {
          const call = batch.calls[entry.index];
          if (entry.kind === 'approval') {
            const decision = decisions.get(entry.actionId);
            results[entry.index] = decision?.approve ? await callTool(call) : deny(call, decision?.reason);
            continue;
          }
          const own = childDecisions(entry, decisions);
          try {
            results[entry.index] = await callTool(call, { begun: true, invoke: () => resumeChild(entry.runId, own) });
          } catch (error) {
            if (!(error instanceof ToolCallWaits)) throw error;
            addWaitingChild(waiting, entry.index, error);
          }
        }
      } catch (error) {
        abandon([...batch.waiting, ...waiting.entries]);
        throw error;
      }
      if (waiting.entries.length > 0) throw new RunPaused({ ...batch, results, waiting: waiting.entries }, waiting.actions);
      return results as ToolCallResult[];
    },
  };
}
