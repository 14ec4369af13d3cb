// One tool call of a run: the model's arguments read as JSON, the function found, called, timed and
// recorded as a step, with `tool_call`/`tool_result` sent to a streamed client. A tool's failure
// is told to the model as its result (the run goes on); only the run being stopped is thrown.
import { MAX_TOOL_ERROR_TEXT } from './failures.js';
import type { ToolCallRequest, ToolCallResult } from './strategies.js';
import type { RunStep } from './store.js';
import type { RunTool, ToolCallContext } from './tool-types.js';

export interface ToolCallEvents {
  toolCall(data: { id: string; tool: string; function: string; input: unknown }): void;
  toolResult(data: { id: string } & ToolCallResult): void;
}

/** The run's `callTool`: each call is appended to `steps`. */
export function createToolCaller(tools: RunTool[], context: ToolCallContext, steps: RunStep[], events: ToolCallEvents) {
  return async function callTool(call: ToolCallRequest): Promise<ToolCallResult> {
    const tool = tools.find((candidate) => candidate.name === call.name);
    const begun = performance.now();
    let input: unknown = call.arguments;
    try {
      input = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch {
      // kept as the text the model wrote
    }
    events.toolCall({ id: call.id, tool: tool?.toolName ?? call.name, function: call.name, input });
    let result: ToolCallResult;
    if (!tool) {
      result = { error: `There is no function named "${call.name.slice(0, 64)}"; use one of: ${tools.map((t) => t.name).join(', ') || 'none'}.` };
    } else if (typeof input === 'string') {
      result = { error: 'The arguments are not valid JSON; send a JSON object.' };
    } else {
      try {
        result = { output: await tool.call(input, context) };
      } catch (error) {
        if (context.signal.aborted) throw error;
        result = { error: error instanceof Error && error.message ? error.message.slice(0, MAX_TOOL_ERROR_TEXT) : 'The tool failed.' };
      }
    }
    const ms = Math.round(performance.now() - begun);
    steps.push({ tool: tool?.toolName ?? call.name, toolId: tool?.toolId ?? '', function: call.name, input, ...result, ms });
    events.toolResult({ id: call.id, ...result });
    return result;
  };
}
