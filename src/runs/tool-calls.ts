// One tool call of a run: the model's arguments read as JSON, the function found, called, timed and
// recorded as a step, with `tool_call`/`tool_result` sent to a streamed client. A tool's failure
// is told to the model as its result (the run goes on); only the run being stopped is thrown.
// A run makes at most `maxCalls` calls: later ones are refused (not run, not recorded), and a call
// whose arguments pass MAX_TOOL_ARGUMENT_CHARS is refused with the beginning of them recorded.
import { boundToolOutput, MAX_TOOL_ARGUMENT_CHARS, refusedArguments, toolCallsOfRunRefused } from './bounds.js';
import { MAX_TOOL_ERROR_TEXT } from './failures.js';
import type { ToolCallRequest } from './messages.js';
import type { ToolCallResult } from './strategies.js';
import type { RunStep } from './store.js';
import type { ToolFunction, ToolCallContext } from '../lib/tool-contract.js';

export interface ToolCallEvents {
  toolCall(data: { id: string; tool: string; function: string; input: unknown }): void;
  toolResult(data: { id: string } & ToolCallResult): void;
}

/** The run's `callTool`: each call is appended to `steps`; `warn` adds to the run's warnings. */
export function createToolCaller(
  tools: ToolFunction[],
  context: ToolCallContext,
  steps: RunStep[],
  events: ToolCallEvents,
  limits: { maxCalls: number; warn(message: string): void },
) {
  let calls = 0;
  return async function callTool(call: ToolCallRequest): Promise<ToolCallResult> {
    if (calls >= limits.maxCalls) {
      limits.warn(toolCallsOfRunRefused(limits.maxCalls));
      return { error: `Refused: this run has made its ${limits.maxCalls} tool calls. Answer with what you have.` };
    }
    calls += 1;
    const tool = tools.find((candidate) => candidate.name === call.name);
    const name = call.name.slice(0, 100); // a function that does not exist is named as the model wrote it, cut
    const begun = performance.now();
    const tooLong = call.arguments.length > MAX_TOOL_ARGUMENT_CHARS;
    let input: unknown = tooLong ? refusedArguments(call.arguments) : call.arguments;
    try {
      if (!tooLong) input = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch {
      // kept as the text the model wrote
    }
    events.toolCall({ id: call.id, tool: tool?.toolName ?? name, function: name, input });
    let result: ToolCallResult;
    if (tooLong) {
      result = { error: `The arguments are longer than ${MAX_TOOL_ARGUMENT_CHARS} characters; the call was not run.` };
    } else if (!tool) {
      result = {
        error: `There is no function named "${call.name.slice(0, 64)}"; use one of: ${tools.map((t) => t.name).join(', ') || 'none'}.`,
      };
    } else if (typeof input === 'string') {
      result = { error: 'The arguments are not valid JSON; send a JSON object.' };
    } else {
      try {
        result = { output: boundToolOutput(await tool.call(input, context)) };
      } catch (error) {
        if (context.signal.aborted) throw error;
        result = { error: error instanceof Error && error.message ? error.message.slice(0, MAX_TOOL_ERROR_TEXT) : 'The tool failed.' };
      }
    }
    const ms = Math.round(performance.now() - begun);
    steps.push({ tool: tool?.toolName ?? name, toolId: tool?.toolId ?? '', function: name, input, ...result, ms });
    events.toolResult({ id: call.id, ...result });
    return result;
  };
}
