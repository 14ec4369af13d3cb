// One model call of a run: plain or streamed (tokens forwarded as they come, tool calls put
// together from their pieces), counted against RUN_MAX_STEPS, under the run's signal (aborted at
// its deadline), with the usage the server reports added up. A call that fails throws a
// RunFailure in words (or the signal's reason, when the run was stopped).
// This is the edge between the run and the model's API: the conversation (src/runs/messages.ts)
// goes out as chat-completions messages and tools, and the answer comes back as a ModelReply.
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ChatApi, ChatParams } from './chat-api.js';
import type { ModelEndpoint } from './model.js';
import { RunFailure } from './failures.js';
import type { ChatMessage, FunctionSpec, ModelReply, ToolCallRequest } from './messages.js';
import type { ChatRequest } from './strategies.js';
import type { Sampling } from './run.js';
import type { RunUsage } from './store.js';

export interface ModelCallOptions {
  endpoint: ModelEndpoint;
  api: ChatApi;
  maxSteps: number;
  signal: AbortSignal;
  /** True when the client is streamed: the model's answers are streamed too. */
  streaming: boolean;
  /** Sends text to the client as `token` events. */
  emitToken(text: string): void;
  /** The caller's sampling settings, sent with every call. */
  sampling?: Sampling;
  /** A run going on after a pause: the model calls it made and the usage reported before. */
  made?: number;
  usage?: RunUsage | null;
}

/** A message of the conversation as the chat-completions API takes it. */
function wireMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'assistant':
      if (!message.toolCalls || message.toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default:
      return { role: message.role, content: message.content };
  }
}

/** The functions offered, as the chat-completions API takes them. */
const wireTools = (functions: FunctionSpec[]): ChatCompletionTool[] =>
  functions.map((spec) => ({
    type: 'function',
    function: { name: spec.name, description: spec.description, parameters: spec.parameters },
  }));

/** The run's `chat`, the usage its calls reported (null while none did), and how many it made. */
export function createModelCall(options: ModelCallOptions): {
  chat(request: ChatRequest): Promise<ModelReply>;
  usage(): RunUsage | null;
  made(): number;
} {
  const { endpoint, api, signal, streaming, sampling } = options;
  let usage: RunUsage | null = options.usage ?? null;
  let calls = options.made ?? 0;
  const addUsage = (reported: { prompt_tokens?: number; completion_tokens?: number } | null | undefined) => {
    if (!reported) return;
    usage = {
      promptTokens: (usage?.promptTokens ?? 0) + (reported.prompt_tokens ?? 0),
      completionTokens: (usage?.completionTokens ?? 0) + (reported.completion_tokens ?? 0),
    };
  };

  async function plain(params: ChatParams): Promise<ModelReply> {
    const completion = await api.complete(endpoint, params, signal);
    addUsage(completion.usage);
    const message = completion.choices?.[0]?.message;
    // The answer is the endpoint's JSON, whatever it holds: anything not shaped as expected is left out.
    const toolCalls = (Array.isArray(message?.tool_calls) ? message.tool_calls : []).flatMap((call) =>
      call?.type === 'function' && typeof call.function?.name === 'string'
        ? [
            {
              id: String(call.id ?? ''),
              name: call.function.name,
              arguments: typeof call.function.arguments === 'string' ? call.function.arguments : '',
            },
          ]
        : [],
    );
    return { content: typeof message?.content === 'string' ? message.content : '', toolCalls };
  }

  async function streamed(params: ChatParams, request: ChatRequest): Promise<ModelReply> {
    let content = '';
    const toolCalls: ToolCallRequest[] = [];
    await api.stream(endpoint, params, signal, (chunk) => {
      addUsage(chunk.usage);
      const delta = chunk.choices?.[0]?.delta;
      if (!delta) return;
      if (typeof delta.content === 'string' && delta.content !== '') {
        content += delta.content;
        if (request.streamTokens) options.emitToken(delta.content);
        request.onText?.(delta.content);
      }
      for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (typeof piece !== 'object' || piece === null) continue;
        const index = Number.isInteger(piece.index) && piece.index >= 0 && piece.index < 1000 ? piece.index : toolCalls.length;
        const call = (toolCalls[index] ??= { id: '', name: '', arguments: '' });
        if (typeof piece.id === 'string' && piece.id) call.id = piece.id;
        const { name, arguments: args } = piece.function ?? {};
        if (typeof name === 'string' && name && call.name !== name) call.name += name;
        if (typeof args === 'string') call.arguments += args;
      }
    });
    return { content, toolCalls: toolCalls.filter(Boolean).map((call, index) => ({ ...call, id: call.id || `call_${index}` })) };
  }

  return {
    async chat(request) {
      if (calls >= options.maxSteps) {
        throw new RunFailure('max_steps', `The agent made ${options.maxSteps} model calls without reaching an answer (RUN_MAX_STEPS).`);
      }
      calls += 1;
      const params: ChatParams = {
        model: endpoint.model,
        messages: request.messages.map(wireMessage),
        ...(request.tools && request.tools.length > 0 ? { tools: wireTools(request.tools) } : {}),
      };
      const stop = sampling?.stop ? [...new Set([...(request.stop ?? []), ...sampling.stop])] : request.stop;
      if (sampling) Object.assign(params, sampling);
      if (stop) params.stop = stop;
      return streaming ? streamed(params, request) : plain(params);
    },
    usage: () => usage,
    made: () => calls,
  };
}
