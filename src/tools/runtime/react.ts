// The ReAct text loop, in the format of LangChain's MRKL agent: the tools and the format are in
// the system message, the model writes Thought / Action / Action Input, we stop it at
// "\nObservation:", run the tool and feed the Observation back, until it writes "Final Answer:".
// It needs nothing from the model but text, so it works with models that have no tool calling.
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { RunTool } from '../../runs/tool-types.js';

export const OBSERVATION = '\nObservation:';
const FINAL_ANSWER = 'Final Answer:';

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

/** What the ReAct loop needs of a run (the run engine's strategy context has it). */
export interface ReactRun {
  /** System message, remembered turns, the user's input. */
  messages: ChatCompletionMessageParam[];
  tools: RunTool[];
  streaming: boolean;
  /** One model call, counted against the step limit (which fails the run). `onText` sees streamed text as it comes. */
  chat(request: { messages: ChatCompletionMessageParam[]; stop?: string[]; streamTokens?: boolean; onText?: (text: string) => void }): Promise<{ content: string }>;
  /** Runs one call and records it as a step; a failure comes back as `error`. */
  callTool(call: { id: string; name: string; arguments: string }): Promise<{ output?: string; error?: string }>;
  /** Sends text to a streamed client. */
  emitToken(text: string): void;
}

/**
 * The REACT strategy: the tool instructions join the system message, then model calls and tool
 * calls alternate until "Final Answer:". With no tools it is one plain chat call.
 */
export async function reactStrategy(run: ReactRun): Promise<string> {
  if (run.tools.length === 0) return (await run.chat({ messages: run.messages, streamTokens: true })).content;
  const messages = run.messages;
  const instructions = reactInstructions(run.tools);
  const system = messages[0];
  if (system?.role === 'system' && typeof system.content === 'string') system.content = `${system.content}\n\n${instructions}`;
  else messages.unshift({ role: 'system', content: instructions });
  let invalidInARow = 0;
  for (let call = 1; ; call += 1) {
    const filter = run.streaming ? createFinalAnswerFilter((text) => run.emitToken(text)) : undefined;
    const reply = await run.chat({ messages, stop: [OBSERVATION], streamTokens: false, onText: filter ? (text) => filter.push(text) : undefined });
    const parsed = parseReactOutput(reply.content);
    if (parsed.kind === 'final') {
      if (filter) {
        filter.end();
        // A server that does not stream text (or a model that answered at once) still gets its answer sent.
        if (!filter.emitted && parsed.answer) run.emitToken(parsed.answer);
      }
      return parsed.answer;
    }
    messages.push({ role: 'assistant', content: parsed.text.trimEnd() });
    if (parsed.kind === 'invalid') {
      invalidInARow += 1;
      // A model that twice ignores the format is answering directly: its text is the answer.
      if (invalidInARow >= 2) {
        const output = parsed.text.replace(/^\s*Thought:\s*/i, '').trim();
        if (run.streaming) run.emitToken(output);
        return output;
      }
      messages.push({ role: 'user', content: 'Observation: Invalid format: write either "Action:" and "Action Input:", or "Final Answer:".\nThought:' });
      continue;
    }
    invalidInARow = 0;
    const tool = run.tools.find((candidate) => candidate.name === parsed.action)
      ?? run.tools.find((candidate) => candidate.name.toLowerCase() === parsed.action.toLowerCase());
    let observation: string;
    if (!tool) {
      observation = `${parsed.action.slice(0, 100)} is not a valid tool, try one of [${run.tools.map((candidate) => candidate.name).join(', ')}].`;
    } else {
      const args = reactArguments(tool, parsed.actionInput);
      const result = await run.callTool({ id: `react_${call}`, name: tool.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });
      observation = result.error !== undefined ? `Error: ${result.error}` : (result.output ?? '');
    }
    messages.push({ role: 'user', content: `Observation: ${observation}\nThought:` });
  }
}
