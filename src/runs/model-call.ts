// One model call of a run: plain or streamed (tokens forwarded as they come, tool calls put
// together from their pieces), counted against RUN_MAX_STEPS, under the run's deadline and signal,
// with the usage the server reports added up. Whatever the call throws comes back as a RunFailure
// in words (or the signal's reason, when the run was stopped).
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import type OpenAI from 'openai';
import type { ModelEndpoint } from './model.js';
import { modelFailure, RunFailure } from './failures.js';
import type { ChatRequest, ModelReply, ToolCallRequest } from './strategies.js';
import type { RunUsage } from './store.js';

export interface ModelCallOptions {
  endpoint: ModelEndpoint;
  /** The `openai` client for `endpoint`. */
  client: OpenAI;
  timeoutMs: number;
  maxSteps: number;
  deadline: number;
  signal: AbortSignal;
  /** True when the client is streamed: the model's answers are streamed too. */
  streaming: boolean;
  /** Sends text to the client as `token` events. */
  emitToken(text: string): void;
}

/** The run's `chat`, and the usage its calls reported (null while none did). */
export function createModelCall(options: ModelCallOptions): { chat(request: ChatRequest): Promise<ModelReply>; usage(): RunUsage | null } {
  const { endpoint, signal, streaming } = options;
  const { client } = options;
  let usage: RunUsage | null = null;
  let calls = 0;
  const addUsage = (reported: { prompt_tokens?: number; completion_tokens?: number } | null | undefined) => {
    if (!reported) return;
    usage = {
      promptTokens: (usage?.promptTokens ?? 0) + (reported.prompt_tokens ?? 0),
      completionTokens: (usage?.completionTokens ?? 0) + (reported.completion_tokens ?? 0),
    };
  };

  async function plain(params: ChatCompletionCreateParamsBase, requestOptions: { signal: AbortSignal; timeout: number }): Promise<ModelReply> {
    const completion = await client.chat.completions.create({ ...params, stream: false }, requestOptions);
    addUsage(completion.usage);
    const message = completion.choices[0]?.message;
    const toolCalls = (message?.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }] : [],
    );
    return { content: message?.content ?? '', toolCalls };
  }

  async function streamed(
    params: ChatCompletionCreateParamsBase,
    requestOptions: { signal: AbortSignal; timeout: number },
    request: ChatRequest,
  ): Promise<ModelReply> {
    const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, requestOptions);
    let content = '';
    const toolCalls: ToolCallRequest[] = [];
    for await (const chunk of stream) {
      addUsage(chunk.usage);
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        content += delta.content;
        if (request.streamTokens) options.emitToken(delta.content);
        request.onText?.(delta.content);
      }
      for (const piece of delta.tool_calls ?? []) {
        const call = (toolCalls[piece.index ?? toolCalls.length] ??= { id: '', name: '', arguments: '' });
        if (piece.id) call.id = piece.id;
        if (piece.function?.name && call.name !== piece.function.name) call.name += piece.function.name;
        if (piece.function?.arguments) call.arguments += piece.function.arguments;
      }
    }
    return { content, toolCalls: toolCalls.filter(Boolean).map((call, index) => ({ ...call, id: call.id || `call_${index}` })) };
  }

  return {
    async chat(request) {
      if (calls >= options.maxSteps) {
        throw new RunFailure('max_steps', `The agent made ${options.maxSteps} model calls without reaching an answer (RUN_MAX_STEPS).`);
      }
      calls += 1;
      const params: ChatCompletionCreateParamsBase = {
        model: endpoint.model,
        messages: request.messages,
        ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
        ...(request.stop ? { stop: request.stop } : {}),
      };
      const requestOptions = { signal, timeout: Math.max(1, options.deadline - Date.now()) };
      try {
        return streaming ? await streamed(params, requestOptions, request) : await plain(params, requestOptions);
      } catch (error) {
        if (signal.aborted) throw error;
        throw modelFailure(error, endpoint, options.timeoutMs);
      }
    },
    usage: () => usage,
  };
}
