// Runs as the OpenAI-compatible API shows them: an agent is a model, a chat completion is a run
// (`chatcmpl-<run id>`), and so is a response (`resp_<run id>`), whose conversation is the run's session.
import type { RunResult } from '../runs/run.js';
import type { RunRow, RunStatus, RunUsage } from '../runs/store.js';
import type { ChatCompletion, ModelObject, ResponseObject } from './schema.js';

export const OWNED_BY = 'agent-service';
export const CHAT_ID_PREFIX = 'chatcmpl-';
export const RESPONSE_ID_PREFIX = 'resp_';
/** Why a response is `incomplete`: its run waits for tool calls to be approved (POST /api/v1/runs/{id}/actions). */
export const INCOMPLETE_REASON = 'requires_action';
/** The id of a response's one message item. */
export const messageIdOf = (runId: string) => `msg_${runId}`;

/** A timestamp of the service as Unix seconds. */
export const unixSeconds = (timestamp: string) => Math.floor(Date.parse(timestamp) / 1000);

export function presentModel(agent: { id: string; createdAt: string }): ModelObject {
  return { id: agent.id, object: 'model', created: unixSeconds(agent.createdAt), owned_by: OWNED_BY };
}

export function chatUsage(usage: RunUsage | null) {
  const prompt = usage?.promptTokens ?? 0;
  const completion = usage?.completionTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function presentChatCompletion(result: RunResult, model: string, created: number): ChatCompletion {
  return {
    id: CHAT_ID_PREFIX + result.runId,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: result.output, refusal: null }, finish_reason: 'stop', logprobs: null }],
    usage: chatUsage(result.usage),
  };
}

/** What a response shows beyond its run: the request's settings (unknown for a response read back later). */
export interface ResponseSettings {
  instructions: string | null;
  metadata: Record<string, string>;
  previousResponseId: string | null;
  store: boolean;
  temperature: number | null;
  topP: number | null;
  maxOutputTokens: number | null;
}

export const UNKNOWN_SETTINGS: ResponseSettings = {
  instructions: null,
  metadata: {},
  previousResponseId: null,
  store: true,
  temperature: null,
  topP: null,
  maxOutputTokens: null,
};

/** A response's state: the run's, as it goes or as recorded. */
export interface ResponseState {
  runId: string;
  model: string;
  createdAt: number;
  status: ResponseObject['status'];
  /** The answer once complete (null before, or when it failed). */
  output: string | null;
  usage: RunUsage | null;
  error: { code: string; message: string } | null;
}

export const responseUsage = (usage: RunUsage | null) =>
  usage === null
    ? null
    : {
        input_tokens: usage.promptTokens,
        output_tokens: usage.completionTokens,
        total_tokens: usage.promptTokens + usage.completionTokens,
      };

/** The output_text part holding `text`. */
export const outputText = (text: string) => ({ type: 'output_text' as const, text, annotations: [] as unknown[] });

/** The message item of a response: `completed` with its text, or `in_progress` while it is written. */
export const messageItem = (runId: string, text: string | null) => ({
  id: messageIdOf(runId),
  type: 'message' as const,
  role: 'assistant' as const,
  status: text === null ? ('in_progress' as const) : ('completed' as const),
  content: text === null ? [] : [outputText(text)],
});

export function presentResponse(state: ResponseState, settings: ResponseSettings): ResponseObject {
  return {
    id: RESPONSE_ID_PREFIX + state.runId,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    model: state.model,
    output: state.output === null ? [] : [messageItem(state.runId, state.output)],
    output_text: state.output ?? '',
    usage: responseUsage(state.usage),
    error: state.error,
    // The one way a response of the service is incomplete: its run waits for a person to approve tool calls.
    incomplete_details: state.status === 'incomplete' ? { reason: INCOMPLETE_REASON } : null,
    instructions: settings.instructions,
    metadata: settings.metadata,
    previous_response_id: settings.previousResponseId,
    store: settings.store,
    temperature: settings.temperature,
    top_p: settings.topP,
    max_output_tokens: settings.maxOutputTokens,
    parallel_tool_calls: false,
    tool_choice: 'auto',
    tools: [],
  };
}

const STATUS_OF: Record<RunStatus, ResponseObject['status']> = {
  queued: 'queued',
  running: 'in_progress',
  requires_action: 'incomplete',
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** A recorded run as the response it is (GET /v1/responses/{id}). */
export function responseOfRun(run: RunRow): ResponseObject {
  const status = STATUS_OF[run.status];
  return presentResponse(
    {
      runId: run.id,
      model: run.agentId,
      createdAt: unixSeconds(run.startedAt),
      status,
      output: status === 'completed' ? (run.output ?? '') : null,
      usage: run.usage,
      error:
        status === 'failed' || status === 'cancelled'
          ? { code: status === 'failed' ? 'server_error' : 'cancelled', message: run.error ?? '' }
          : null,
    },
    UNKNOWN_SETTINGS,
  );
}
