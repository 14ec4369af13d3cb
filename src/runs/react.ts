// The ReAct text loop, in the format of LangChain's MRKL agent: the tools and the format are in
// the system message, the model writes Thought / Action / Action Input, we stop it at
// "\nObservation:", run the tool and feed the Observation back, until it writes "Final Answer:".
// It needs nothing from the model but text, so it works with models that have no tool calling.
import type { ChatMessage } from './messages.js';
import type { ToolFunction } from '../lib/tool-contract.js';
import { createReactScanner, FINAL_ANSWER, isSpace, scanReact } from './react-scan.js';

export const OBSERVATION = '\nObservation:';

/** The instructions appended to the system message: the tool list and the format (LangChain's MRKL prompt). */
export function reactInstructions(tools: ToolFunction[]): string {
  const list = tools
    .map(
      (tool) =>
        `${tool.name}: ${tool.description.replace(/\s+/g, ' ')} Arguments (JSON Schema): ${JSON.stringify((tool.parameters as { properties?: unknown }).properties ?? {})}`,
    )
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

/** `text` without the characters of `strip` at its start and `stripEnd` at its end (no regular expression: it is the model's text). */
function stripEnds(text: string, strip: string, stripEnd: string): string {
  let from = 0;
  let to = text.length;
  while (from < to && strip.includes(text[from])) from += 1;
  while (to > from && stripEnd.includes(text[to - 1])) to -= 1;
  return text.slice(from, to);
}

/** Reads one model answer: an action to run, the final answer, or neither. Linear in the text's length. */
export function parseReactOutput(raw: string): ReactOutput {
  const text = cutAtObservation(raw);
  const { action, input, final } = scanReact(text);
  if (action && input && (final === undefined || action.start < final)) {
    return {
      kind: 'action',
      action: stripEnds(text.slice(action.end, input.start).trim(), '`\'"[', '`\'"]'),
      actionInput: text.slice(input.end).trim(),
      text,
    };
  }
  if (final !== undefined) return { kind: 'final', answer: text.slice(final + FINAL_ANSWER.length).trim(), text };
  return { kind: 'invalid', text };
}

/** An Action Input without the Markdown code fence (```json … ```) a model may put around it. */
function withoutFence(actionInput: string): string {
  let input = actionInput.trim();
  if (input.startsWith('```')) input = input.slice(input.startsWith('```json') ? 7 : 3);
  if (input.endsWith('```')) input = input.slice(0, -3);
  return input.trim();
}

/** The arguments an Action Input stands for: JSON when it reads as JSON, else the text for the function's only parameter. */
export function reactArguments(tool: ToolFunction, actionInput: string): unknown {
  const input = withoutFence(actionInput);
  const properties = Object.keys(((tool.parameters as { properties?: object }).properties ?? {}) as object);
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  if (properties.length === 1) {
    const quoted = input.length >= 2 && input.startsWith('"') && input.endsWith('"');
    const text = typeof parsed === 'string' ? parsed : quoted ? input.slice(1, -1) : input;
    return { [properties[0]]: text };
  }
  return parsed ?? input;
}

/**
 * Filters a streamed ReAct answer down to what follows "Final Answer:": nothing of an answer that
 * is an action, and never the model's own "Observation:". Each character is looked at once, so a
 * long answer in many pieces costs time in proportion to its length.
 */
export function createFinalAnswerFilter(emit: (text: string) => void) {
  const scanner = createReactScanner();
  let fed = 0; // characters given to the scanner
  let decided: 'final' | 'action' | undefined;
  let observed = 0; // characters of OBSERVATION matched at the end of the answer so far (held back)
  let cut = false; // the model's own Observation began: nothing after it is sent
  let sent = 0;

  /** Adds `text` to what this push sends, without the answer's leading white space. */
  function release(text: string, out: string[]): void {
    if (sent === 0 && out.length === 0) {
      let from = 0;
      while (from < text.length && isSpace(text.charCodeAt(from))) from += 1;
      text = text.slice(from);
    }
    if (text !== '') out.push(text);
  }

  /** Passes the answer's `text` on, holding back what could be the beginning of "\nObservation:". */
  function pass(text: string, out: string[]): void {
    let from = 0; // start of the characters not yet released or held
    for (let i = 0; i < text.length && !cut; i += 1) {
      const code = text.charCodeAt(i);
      if (code === OBSERVATION.charCodeAt(observed)) {
        if (observed === 0) release(text.slice(from, i), out);
        observed += 1;
        from = i + 1;
        if (observed === OBSERVATION.length) cut = true;
        continue;
      }
      if (observed > 0) {
        // Not the Observation after all: what was held back is answer. OBSERVATION repeats none of
        // its beginnings, so only this character can begin it again.
        release(OBSERVATION.slice(0, observed), out);
        observed = 0;
        from = i;
        if (code === OBSERVATION.charCodeAt(0)) {
          observed = 1;
          from = i + 1;
        }
      }
    }
    if (!cut && observed === 0) release(text.slice(from), out);
  }

  function send(out: string[]): void {
    const text = out.join('');
    if (text === '') return;
    emit(text);
    sent += text.length;
  }

  return {
    push(delta: string): void {
      if (decided === 'action' || cut) return;
      const out: string[] = [];
      if (decided === undefined) {
        scanner.feed(delta);
        fed += delta.length;
        const { action, input, lineAction, final } = scanner.marks;
        // As LangChain reads it: an "Action:" followed by an "Action Input:", or one at the start of a line.
        const actionAt = action && input ? action.start : lineAction;
        if (actionAt !== undefined && (final === undefined || actionAt < final)) {
          decided = 'action';
          return;
        }
        if (final === undefined) return;
        decided = 'final';
        // The final answer begins in this piece: the scanner found its marker here.
        delta = delta.slice(final + FINAL_ANSWER.length - (fed - delta.length));
      }
      pass(delta, out);
      send(out);
    },
    /** Sends what was held back; call when the answer is complete. */
    end(): void {
      if (decided !== 'final' || cut || observed === 0) return;
      const out: string[] = [];
      release(OBSERVATION.slice(0, observed), out);
      observed = 0;
      send(out);
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
  messages: ChatMessage[];
  tools: ToolFunction[];
  streaming: boolean;
  /** One model call, counted against the step limit (which fails the run). `onText` sees streamed text as it comes. */
  chat(request: {
    messages: ChatMessage[];
    stop?: string[];
    streamTokens?: boolean;
    onText?: (text: string) => void;
  }): Promise<{ content: string }>;
  /** Runs calls in order and records each as a step; a failure comes back as `error`; throws when one waits for approval (see StrategyContext). */
  callTools(calls: { id: string; name: string; arguments: string }[], memo: unknown): Promise<{ output?: string; error?: string }[]>;
  /** The call the run paused in, answered, and the step it was (`memo`): the loop goes on from its observation. */
  resumed?: { results: { output?: string; error?: string }[]; memo: unknown };
  /** Sends text to a streamed client. */
  emitToken(text: string): void;
}

/** What the model reads of a call's result. */
const observationOf = (result: { output?: string; error?: string }) =>
  result.error !== undefined ? `Error: ${result.error}` : (result.output ?? '');

/**
 * The REACT strategy: the tool instructions join the system message, then model calls and tool
 * calls alternate until "Final Answer:". With no tools it is one plain chat call.
 */
export async function reactStrategy(run: ReactRun): Promise<string> {
  const messages = run.messages;
  let first = 1;
  if (run.resumed) {
    // The conversation already holds the instructions and the action; its observation comes next.
    first = (typeof run.resumed.memo === 'number' ? run.resumed.memo : 0) + 1;
    messages.push({ role: 'user', content: `Observation: ${observationOf(run.resumed.results[0] ?? {})}\nThought:` });
  } else {
    if (run.tools.length === 0) return (await run.chat({ messages: run.messages, streamTokens: true })).content;
    const instructions = reactInstructions(run.tools);
    const system = messages[0];
    if (system?.role === 'system' && typeof system.content === 'string') system.content = `${system.content}\n\n${instructions}`;
    else messages.unshift({ role: 'system', content: instructions });
  }
  let invalidInARow = 0;
  for (let call = first; ; call += 1) {
    const filter = run.streaming ? createFinalAnswerFilter((text) => run.emitToken(text)) : undefined;
    const reply = await run.chat({
      messages,
      stop: [OBSERVATION],
      streamTokens: false,
      onText: filter ? (text) => filter.push(text) : undefined,
    });
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
        const text = parsed.text.trim();
        const output = text.slice(0, 8).toLowerCase() === 'thought:' ? text.slice(8).trim() : text;
        if (run.streaming) run.emitToken(output);
        return output;
      }
      messages.push({
        role: 'user',
        content: 'Observation: Invalid format: write either "Action:" and "Action Input:", or "Final Answer:".\nThought:',
      });
      continue;
    }
    invalidInARow = 0;
    const tool =
      run.tools.find((candidate) => candidate.name === parsed.action) ??
      run.tools.find((candidate) => candidate.name.toLowerCase() === parsed.action.toLowerCase());
    let observation: string;
    if (!tool) {
      observation = `${parsed.action.slice(0, 100)} is not a valid tool, try one of [${run.tools.map((candidate) => candidate.name).join(', ')}].`;
    } else {
      const args = reactArguments(tool, parsed.actionInput);
      const [result] = await run.callTools(
        [{ id: `react_${call}`, name: tool.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) }],
        call,
      );
      observation = observationOf(result);
    }
    messages.push({ role: 'user', content: `Observation: ${observation}\nThought:` });
  }
}
