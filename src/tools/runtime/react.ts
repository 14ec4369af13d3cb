// The ReAct text loop, in the format of LangChain's MRKL agent: the tools and the format are in
// the system message, the model writes Thought / Action / Action Input, we stop it at
// "\nObservation:", run the tool and feed the Observation back, until it writes "Final Answer:".
// It needs nothing from the model but text, so it works with models that have no tool calling.
import type { RunTool, ToolCallContext } from '../../runs/tool-types.js';

export const OBSERVATION = '\nObservation:';
const FINAL_ANSWER = 'Final Answer:';

export interface ChatText {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The instructions appended to the system message: the tool list and the format (LangChain's MRKL prompt). */
export function reactInstructions(tools: RunTool[]): string {
  const list = tools
    .map((tool) => `${tool.name}: ${tool.description.replace(/\s+/g, ' ')} Arguments (JSON Schema): ${JSON.stringify((tool.parameters as { properties?: unknown }).properties ?? {})}`)
    .join('\n');
  return [
    'Answer the following questions as best you can. You have access to the following tools:',
    '',
    list,
    '',
    'Use the following format:',
    '',
    'Question: the input question you must answer',
    'Thought: you should always think about what to do',
    `Action: the action to take, should be one of [${tools.map((tool) => tool.name).join(', ')}]`,
    'Action Input: the input to the action, as a JSON object of its arguments',
    'Observation: the result of the action',
    '... (this Thought/Action/Action Input/Observation can repeat N times)',
    'Thought: I now know the final answer',
    'Final Answer: the final answer to the original input question',
    '',
    'Begin!',
  ].join('\n');
}

export type ReactOutput =
  | { kind: 'action'; action: string; actionInput: string; text: string }
  | { kind: 'final'; answer: string; text: string }
  | { kind: 'invalid'; text: string };

/** `text` up to the model's own "Observation:" (some servers ignore the stop sequence). */
export function cutAtObservation(text: string): string {
  const at = text.indexOf(OBSERVATION);
  const start = text.startsWith('Observation:') ? 0 : at;
  return start === -1 ? text : text.slice(0, start);
}

const ACTION = /Action\s*\d*\s*:[\s]*(.*?)[\s]*Action\s*\d*\s*Input\s*\d*\s*:[\s]*(.*)/s;

/** Reads one model answer: an action to run, the final answer, or neither. */
export function parseReactOutput(raw: string): ReactOutput {
  const text = cutAtObservation(raw);
  const action = ACTION.exec(text);
  const finalAt = text.indexOf(FINAL_ANSWER);
  if (action && (finalAt === -1 || action.index < finalAt)) {
    return { kind: 'action', action: action[1].trim().replace(/^[`'"[]+|[`'"\]]+$/g, ''), actionInput: action[2].trim(), text };
  }
  if (finalAt !== -1) return { kind: 'final', answer: text.slice(finalAt + FINAL_ANSWER.length).trim(), text };
  return { kind: 'invalid', text };
}

/** The arguments an Action Input stands for: JSON when it reads as JSON, else the text for the function's only parameter. */
export function reactArguments(tool: RunTool, actionInput: string): unknown {
  const input = actionInput.replace(/^```(?:json)?\s*|\s*```$/g, '').trim();
  const properties = Object.keys(((tool.parameters as { properties?: object }).properties ?? {}) as object);
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  if (properties.length === 1) {
    const text = typeof parsed === 'string' ? parsed : input.replace(/^"(.*)"$/s, '$1');
    return { [properties[0]]: text };
  }
  return parsed ?? input;
}

/**
 * Filters a streamed ReAct answer down to what follows "Final Answer:": nothing of an answer that
 * is an action, and never the model's own "Observation:".
 */
export function createFinalAnswerFilter(emit: (text: string) => void) {
  let text = '';
  let start = -1; // where the final answer begins in `text`, once known
  let sent = 0; // characters of `text` after `start` already emitted
  let isAction = false;

  function flush(end: boolean): void {
    if (start === -1) return;
    let body = text.slice(start);
    const cut = body.indexOf(OBSERVATION);
    if (cut !== -1) body = body.slice(0, cut);
    else if (!end) {
      // Hold back a tail that could be the beginning of "\nObservation:".
      for (let keep = Math.min(OBSERVATION.length - 1, body.length); keep > 0; keep -= 1) {
        if (OBSERVATION.startsWith(body.slice(body.length - keep))) {
          body = body.slice(0, body.length - keep);
          break;
        }
      }
    }
    if (sent === 0) {
      const trimmed = body.replace(/^\s+/, '');
      start += body.length - trimmed.length;
      body = trimmed;
    }
    if (body.length > sent) {
      emit(body.slice(sent));
      sent = body.length;
    }
  }

  return {
    push(delta: string): void {
      text += delta;
      if (isAction) return;
      if (start === -1) {
        const finalAt = text.indexOf(FINAL_ANSWER);
        const action = ACTION.exec(text) ?? /(^|\n)\s*Action\s*\d*\s*:/.exec(text);
        if (action && (finalAt === -1 || action.index < finalAt)) {
          isAction = true;
          return;
        }
        if (finalAt === -1) return;
        start = finalAt + FINAL_ANSWER.length;
      }
      flush(false);
    },
    /** Sends what was held back; call when the answer is complete. */
    end(): void {
      if (!isAction) flush(true);
    },
    /** True once some of a final answer was emitted. */
    get emitted(): boolean {
      return sent > 0;
    },
  };
}

/** One model call as the ReAct loop needs it: text in, text out (streamed through `onText` when given). */
export type ReactComplete = (
  messages: ChatText[],
  options: { stop: string[]; onText?: (delta: string) => void },
) => Promise<{ text: string; usage?: { promptTokens: number; completionTokens: number } | null }>;

export interface ReactStep {
  tool: string;
  toolId: string;
  function: string;
  input: unknown;
  output?: string;
  error?: string;
  ms: number;
}

export interface ReactHooks {
  onToolCall?: (call: { id: string; tool: string; input: unknown }) => void;
  onToolResult?: (result: { id: string; output?: string; error?: string }) => void;
  /** Tokens of the final answer only. */
  onToken?: (text: string) => void;
}

export class MaxStepsError extends Error {
  override readonly name = 'MaxStepsError';
}

/**
 * Runs the loop: `messages` ends with the user's input and starts with the system message, to
 * which the tool instructions are added. Answers the text after "Final Answer:".
 */
export async function runReactLoop(options: {
  complete: ReactComplete;
  tools: RunTool[];
  messages: ChatText[];
  maxSteps: number;
  context: ToolCallContext;
  hooks?: ReactHooks;
}): Promise<{ output: string; steps: ReactStep[]; usage: { promptTokens: number; completionTokens: number } | null }> {
  const { complete, tools, maxSteps, context, hooks = {} } = options;
  const messages = options.messages.map((message) => ({ ...message }));
  const instructions = reactInstructions(tools);
  if (messages[0]?.role === 'system') messages[0].content = `${messages[0].content}\n\n${instructions}`;
  else messages.unshift({ role: 'system', content: instructions });
  const steps: ReactStep[] = [];
  let usage = null as { promptTokens: number; completionTokens: number } | null;
  let invalidInARow = 0;
  for (let call = 1; call <= maxSteps; call += 1) {
    const filter = hooks.onToken ? createFinalAnswerFilter(hooks.onToken) : undefined;
    const answer = await complete(messages, { stop: [OBSERVATION], onText: filter ? (delta) => filter.push(delta) : undefined });
    filter?.end();
    if (answer.usage) {
      usage = {
        promptTokens: (usage?.promptTokens ?? 0) + answer.usage.promptTokens,
        completionTokens: (usage?.completionTokens ?? 0) + answer.usage.completionTokens,
      };
    }
    const parsed = parseReactOutput(answer.text);
    if (parsed.kind === 'final') return { output: parsed.answer, steps, usage };
    messages.push({ role: 'assistant', content: parsed.text.trimEnd() });
    if (parsed.kind === 'invalid') {
      invalidInARow += 1;
      // A model that twice ignores the format is answering directly: its text is the answer.
      if (invalidInARow >= 2) {
        const output = parsed.text.replace(/^\s*Thought:\s*/i, '').trim();
        hooks.onToken?.(output);
        return { output, steps, usage };
      }
      messages.push({ role: 'user', content: `Observation: Invalid format: write either "Action:" and "Action Input:", or "Final Answer:".\nThought:` });
      continue;
    }
    invalidInARow = 0;
    const tool = tools.find((candidate) => candidate.name === parsed.action) ?? tools.find((candidate) => candidate.name.toLowerCase() === parsed.action.toLowerCase());
    let observation: string;
    if (!tool) {
      observation = `${parsed.action.slice(0, 100)} is not a valid tool, try one of [${tools.map((candidate) => candidate.name).join(', ')}].`;
    } else {
      const input = reactArguments(tool, parsed.actionInput);
      const id = `call_${call}`;
      hooks.onToolCall?.({ id, tool: tool.toolName, input });
      const started = Date.now();
      try {
        const output = await tool.call(input, context);
        steps.push({ tool: tool.toolName, toolId: tool.toolId, function: tool.name, input, output, ms: Date.now() - started });
        hooks.onToolResult?.({ id, output });
        observation = output;
      } catch (error) {
        if (context.signal.aborted) throw error;
        const message = error instanceof Error ? error.message : String(error);
        steps.push({ tool: tool.toolName, toolId: tool.toolId, function: tool.name, input, error: message, ms: Date.now() - started });
        hooks.onToolResult?.({ id, error: message });
        observation = `Error: ${message}`;
      }
    }
    messages.push({ role: 'user', content: `Observation: ${observation}\nThought:` });
  }
  throw new MaxStepsError(`the agent did not finish within ${maxSteps} model calls (RUN_MAX_STEPS)`);
}
