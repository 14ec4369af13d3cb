// How each agent type reaches its answer. A strategy sees the conversation, the tools and two
// calls — one to the model, one to the tools of a reply — and resolves with the final text; the
// run around it (steps, limits, deadline, records, pausing for approval) is the engine's.
import type { AgentType } from '../agents/schema.js';
import { reactStrategy } from './react.js';
import { MAX_TOOL_CALLS_PER_REPLY, toolCallsOfReplyCut } from './bounds.js';
import type { ToolFunction } from '../lib/tool-contract.js';
import type { ChatMessage, FunctionSpec, ModelReply, ToolCallRequest } from './messages.js';

/** What one model call is asked. */
export interface ChatRequest {
  messages: ChatMessage[];
  tools?: FunctionSpec[];
  stop?: string[];
  /** Streamed runs only: send the text to the client as `token` events as it comes. */
  streamTokens?: boolean;
  /** Sees the text of a streamed answer as it comes (the ReAct loop streams only its final answer). */
  onText?: (text: string) => void;
}

/** What a tool call came to: its output, or an error told to the model. */
export interface ToolCallResult {
  output?: string;
  error?: string;
}

/** What a strategy works with: the conversation so far, the tools, and one call each to the model and a tool. */
export interface StrategyContext {
  /** System message, the conversation before (remembered or given), the user's input. A strategy may append to it. */
  messages: ChatMessage[];
  tools: ToolFunction[];
  /** True when the client is streamed: `chat` with `streamTokens` forwards text as it comes, `emitToken` sends text. */
  streaming: boolean;
  signal: AbortSignal;
  /** One model call (counted against RUN_MAX_STEPS). */
  chat(request: ChatRequest): Promise<ModelReply>;
  /**
   * Runs one model reply's tool calls in order: records the steps, streams tool_call/tool_result; a
   * failure comes back as `error`, never thrown. When a call waits for approval it throws (the run
   * pauses): push the reply to `messages` before, and give as `memo` (JSON) what the strategy
   * needs to go on, which `resumed` hands back.
   */
  callTools(calls: ToolCallRequest[], memo: unknown): Promise<ToolCallResult[]>;
  /**
   * Set when the run goes on after a pause: the calls it paused in, all answered now, and its
   * `memo`. `messages` are the conversation as it was (the reply with those calls last): the
   * strategy takes up from their results.
   */
  resumed?: { calls: ToolCallRequest[]; results: ToolCallResult[]; memo: unknown };
  /** Sends text to a streamed client as `token` events (a strategy that does not stream its model calls). */
  emitToken(text: string): void;
  /** Adds a warning to the run (once, however often it is given). */
  warn(message: string): void;
}

/** How an agent type reaches its answer; resolves with the final text. */
export type RunStrategy = (run: StrategyContext) => Promise<string>;

/** The functions offered to a model with native tool calling. */
function functionsOf(tools: ToolFunction[]): FunctionSpec[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
}

/** Native tool calling (VENDOR_A): the model asks for tool calls, gets their results, until it answers in text. */
export const nativeToolsStrategy: RunStrategy = async (run) => {
  const offered = run.tools.length > 0 ? functionsOf(run.tools) : undefined;
  let resumed = run.resumed;
  for (;;) {
    let calls: ToolCallRequest[];
    let results: ToolCallResult[];
    let note: string | undefined;
    if (resumed) {
      ({ calls, results } = resumed);
      note = typeof resumed.memo === 'string' ? resumed.memo : undefined;
      resumed = undefined;
    } else {
      const reply = await run.chat({ messages: run.messages, tools: offered, streamTokens: true });
      if (reply.toolCalls.length === 0) return reply.content;
      // The calls past the bound are left out of the conversation; the model reads why after the last result.
      calls = reply.toolCalls.slice(0, MAX_TOOL_CALLS_PER_REPLY);
      note = calls.length < reply.toolCalls.length ? toolCallsOfReplyCut(reply.toolCalls.length) : undefined;
      if (note) run.warn(note);
      run.messages.push({ role: 'assistant', content: reply.content, toolCalls: calls });
      results = await run.callTools(calls, note ?? null);
    }
    for (const [index, call] of calls.entries()) {
      const result = results[index];
      const content = result.error === undefined ? (result.output ?? '') : `Error: ${result.error}`;
      const last = index === calls.length - 1;
      run.messages.push({
        role: 'tool',
        toolCallId: call.id,
        content: last && note ? `${content}\n\n[Note: ${note} Ask for at most ${MAX_TOOL_CALLS_PER_REPLY} at once.]` : content,
      });
    }
  }
};

/** Each agent type's strategy: REACT is the text ReAct loop (react.ts). */
export const strategies: Record<AgentType, RunStrategy> = {
  VENDOR_A: nativeToolsStrategy,
  REACT: reactStrategy,
};
