// The OpenAI-compatible API under /v1: the caller's agents are its models, and a chat completion
// runs one. An OpenAI client pointed at http://host:3000/v1 with an API token as its key works as
// it would against OpenAI, but the agent's prompt, documents and tools apply (the tools run here).
// Its errors are OpenAI's shape (errors.ts); the Responses API is in responses.ts.
import type { AgentStore } from '../agents/store.js';
import { KEEP_ALIVE_MS } from '../http/sse.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RunEngine } from '../runs/engine.js';
import type { EventLog } from '../runs/event-log.js';
import type { RunStore } from '../runs/store.js';
import { clientGone, streamRun } from '../runs/routes.js';
import { conversationOf, samplingOf } from './conversation.js';
import { modelNotFound, openAIStatuses, runError } from './errors.js';
import { CHAT_ID_PREFIX, presentChatCompletion, presentModel } from './present.js';
import { responseRoutes } from './responses.js';
import {
  CHAT_CHUNK_EVENTS,
  ChatCompletionRequestSchema,
  ChatCompletionSchema,
  ModelListSchema,
  ModelObjectSchema,
  OpenAIErrorSchema,
} from './schema.js';
import { chatChunks } from './streams.js';

export const TAG = 'OpenAI-compatible';
/** The most agents GET /v1/models lists (OpenAI's list has no pages). */
export const MAX_MODELS = 10_000;

export interface OpenAIRouteDeps {
  agents: AgentStore;
  runs: RunStore;
  engine: RunEngine;
  eventLog: EventLog;
  keepAliveMs?: number;
}

const CHAT_SAMPLING = ['temperature', 'top_p', 'seed', 'max_tokens', 'max_completion_tokens', 'stop'] as const;

export function openAIRoutes(deps: OpenAIRouteDeps): Route[] {
  const { agents, engine, keepAliveMs = KEEP_ALIVE_MS } = deps;
  const errorFormat = { component: 'OpenAIError', schema: OpenAIErrorSchema, validationStatus: 400 as const };
  const common = { root: true as const, tag: TAG, auth: true as const, before: [openAIStatuses], errorFormat };

  return [
    defineRoute({
      ...common,
      method: 'get',
      path: '/v1/models',
      operationId: 'listModels',
      summary: "List the caller's agents as models",
      description: `The caller's agents, oldest first (at most ${MAX_MODELS}): each agent's id is a model name.`,
      success: { status: 200, description: 'The models.', raw: ModelListSchema },
      handler: ({ caller }) => ({ object: 'list' as const, data: agents.listIdentities(caller.id, MAX_MODELS).map(presentModel) }),
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/v1/models/:id',
      operationId: 'getModel',
      summary: 'Get one of the caller’s agents as a model',
      description: "Another user's agent is not found, like a missing one: 404 `model_not_found`.",
      success: { status: 200, description: 'The model.', raw: ModelObjectSchema },
      handler: ({ caller, params }) => {
        const agent = agents.get(caller.id, params.id);
        if (!agent) throw modelNotFound(params.id);
        return presentModel(agent);
      },
    }),
    defineRoute({
      ...common,
      method: 'post',
      path: '/v1/chat/completions',
      operationId: 'createChatCompletion',
      summary: 'Run an agent as a chat completion',
      description:
        "`model` is an agent id. The request's `messages` are the conversation (the agent's memory is not used); the last one, a user message, is the input. " +
        "The agent's prompt (its variables from `metadata`), documents and tools apply as in an invoke, the tools running on the service: a request with its own `tools` is refused (400). " +
        "System and developer messages are added after the agent's prompt. `temperature`, `top_p`, `max_tokens`, `max_completion_tokens`, `stop` and `seed` are passed to the model. " +
        "Every call is a recorded run: the answer's `id` is `chatcmpl-` and the run's id. Errors are OpenAI's shape `{ error: { message, type, param, code } }`: " +
        '400 invalid_request_error, 401 invalid_api_key, 404 model_not_found, 429 rate_limit_exceeded (Retry-After), 502 and 504 from the model side; ' +
        '409 `requires_action` (streamed: an error chunk) when the agent calls a tool needing approval: the run waits, its calls answered with POST /api/v1/runs/{id}/actions as the message says.',
      body: ChatCompletionRequestSchema,
      errors: [409, 502, 504],
      success: {
        status: 200,
        description: 'A `chat.completion` (or, with `stream: true`, its chunks).',
        stream: { events: CHAT_CHUNK_EVENTS },
        raw: ChatCompletionSchema,
      },
      handler: async ({ ctx, caller, body }) => {
        const { input, messages, instructions } = conversationOf(body.messages, 'messages');
        const stream = body.stream === true;
        const request = {
          input,
          variables: body.metadata,
          sessionId: null,
          stream,
          messages,
          instructions,
          sampling: samplingOf(body, CHAT_SAMPLING),
        };
        const prepared = await engine.prepare(caller.id, body.model, request).catch((error) => runError(error, body.model));
        const created = Math.floor(Date.now() / 1000);
        if (!stream) {
          const client = clientGone(ctx);
          const outcome = await engine.execute(prepared, { cancel: client });
          if (!outcome.ok) runError(outcome.failure, body.model, client);
          return presentChatCompletion(outcome.result, body.model, created);
        }
        const includeUsage = body.stream_options?.include_usage === true;
        const chunks = chatChunks({ id: CHAT_ID_PREFIX + prepared.runId, created, model: body.model, includeUsage });
        return streamRun(engine, prepared, chunks, keepAliveMs);
      },
    }),
    ...responseRoutes({ ...deps, keepAliveMs, common }),
  ];
}
