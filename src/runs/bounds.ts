// The sizes of what the model controls in a run, and how a part past its bound is cut. The
// operator's bounds are settings (RUN_ANSWER_MAX_BYTES, RUN_MAX_TOOL_CALLS, RUN_MEMORY_MAX_BYTES);
// these are the fixed ones, and the words a run's `warnings` use when something was cut or refused.
import { cutToBytes } from '../lib/utf8.js';

/** Tool calls of one model reply that are run; the model is told the rest were not. */
export const MAX_TOOL_CALLS_PER_REPLY = 32;
/** Longest arguments text of one tool call (characters); a longer call is refused, not run. */
export const MAX_TOOL_ARGUMENT_CHARS = 64 * 1024;
/**
 * Largest output of one tool call a run keeps (UTF-8 bytes): a web tool's 64 KiB answer and the
 * line it adds about it pass whole; a longer output (an agent's answer) is cut.
 */
export const MAX_TOOL_OUTPUT_BYTES = 65 * 1024;
/** How much of a refused call's arguments the step keeps. */
const REFUSED_ARGUMENTS_KEPT = 200;

const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

export const answerCut = (maxBytes: number) =>
  `The model's answer was longer than ${kib(maxBytes)}; it was cut there (RUN_ANSWER_MAX_BYTES).`;

export const toolCallsOfReplyCut = (asked: number) =>
  `The model asked for ${asked} tool calls in one reply; only the first ${MAX_TOOL_CALLS_PER_REPLY} were run.`;

export const toolCallsOfRunRefused = (max: number) =>
  `The run reached its limit of ${max} tool calls (RUN_MAX_TOOL_CALLS); later calls were refused, and the model was told.`;

/** A refused call's arguments as its step keeps them: the beginning, marked as cut. */
export const refusedArguments = (text: string) => `${text.slice(0, REFUSED_ARGUMENTS_KEPT)}…`;

/** A tool's output within MAX_TOOL_OUTPUT_BYTES, saying where it was cut. */
export function boundToolOutput(output: string): string {
  const cut = cutToBytes(output, MAX_TOOL_OUTPUT_BYTES);
  return cut === output ? output : `${cut}\n[the output was cut at ${kib(MAX_TOOL_OUTPUT_BYTES)}]`;
}
