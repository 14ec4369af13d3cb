// The Responses API under /v1: a response is a run (`resp_<run id>`), and its conversation is the
// run's session, whether or not the agent has memory: `previous_response_id` continues that session
// (its last turns are replayed, the new turn added), and `store: false` keeps no session, so such a
// response can be neither continued nor read back (its run is recorded all the same).
import type { AgentStore } from '../agents/store.js';
import type { AppMiddleware } from '../http/context.js';
import { defineRoute, type ErrorFormat, type Route } from '../http/route.js';
import { newId } from '../lib/ids.js';
import type { RunEngine } from '../runs/engine.js';
import type { RunRequest } from '../runs/run.js';
import { clientGone, streamRun } from '../runs/routes.js';
import type { RunRow, RunStore } from '../runs/store.js';
import { badRequest, responseNotFound, runError } from './errors.js';
import { presentResponse, RESPONSE_ID_PREFIX, responseOfRun, type ResponseSettings } from './present.js';
import { conversationOf, samplingOf, type Conversation } from './conversation.js';
import { DeletedResponseSchema, RESPONSE_EVENTS, ResponseObjectSchema, ResponseRequestSchema } from './schema.js';
import { responseEvents } from './streams.js';

interface ResponseRouteDeps {
  agents: AgentStore;
  runs: RunStore;
  engine: RunEngine;
  keepAliveMs: number;
  /** What every /v1 route declares alike. */
  common: { root: true; tag: string; auth: true; before: AppMiddleware[]; errorFormat: ErrorFormat };
}

const RESPONSE_SAMPLING = ['temperature', 'top_p', 'seed'] as const;

/** The run id a response id names, or undefined when it is not a response id. */
const runIdOf = (responseId: string) =>
  responseId.startsWith(RESPONSE_ID_PREFIX) ? responseId.slice(RESPONSE_ID_PREFIX.length) : undefined;

export function responseRoutes({ runs, engine, keepAliveMs, common }: ResponseRouteDeps): Route[] {
  /** The caller's stored response `id` (a run with a session), or a 404 naming `param`. */
  function storedRun(userId: string, id: string, param: string | null = null): RunRow {
    const runId = runIdOf(id);
    const run = runId === undefined ? undefined : runs.getRun(userId, runId);
    if (!run || run.sessionId === null) throw responseNotFound(id, param);
    return run;
  }

  return [
    defineRoute({
      ...common,
      method: 'post',
      path: '/v1/responses',
      operationId: 'createResponse',
      summary: 'Run an agent as a response (the Responses API)',
      description:
        "`model` is an agent id; `input` a string or message items (the last a user message), `instructions` added after the agent's prompt, `metadata` its prompt's variables. " +
        "A response is a run (`resp_` and the run's id) and its conversation the run's session, whatever the agent's memory: `previous_response_id` continues it with the same model. " +
        '`store: false` keeps no session: the response cannot be continued or read back. `temperature`, `top_p`, `max_output_tokens` and `seed` are passed to the model. ' +
        'With `stream: true` the answer is the semantic events, each with `sequence_number`. Errors as for chat completions.',
      body: ResponseRequestSchema,
      errors: [502, 504],
      success: {
        status: 200,
        description: 'The `response` (or, streamed, its events).',
        stream: { events: RESPONSE_EVENTS },
        raw: ResponseObjectSchema,
      },
      handler: async ({ ctx, caller, body }) => {
        const store = body.store !== false;
        const stream = body.stream === true;
        const conversation: Conversation =
          typeof body.input === 'string' ? { input: body.input, messages: [], instructions: [] } : conversationOf(body.input, 'input');
        let session: RunRequest['session'];
        if (body.previous_response_id) {
          const previous = storedRun(caller.id, body.previous_response_id, 'previous_response_id');
          if (previous.agentId !== body.model) {
            throw badRequest('previous_response_id', 'The previous response is of another model (agent): continue it with the same model.');
          }
          session = { id: previous.sessionId!, replay: true, remember: store };
        } else if (store) {
          session = { id: newId(), replay: false, remember: true };
        }
        const instructions = [...(body.instructions ? [body.instructions] : []), ...conversation.instructions];
        const sampling = samplingOf(body, RESPONSE_SAMPLING);
        if (body.max_output_tokens) sampling.max_tokens = body.max_output_tokens;
        const request: RunRequest = {
          input: conversation.input,
          variables: body.metadata,
          sessionId: null,
          stream,
          messages: conversation.messages,
          instructions,
          sampling,
          session,
        };
        const prepared = await engine.prepare(caller.id, body.model, request).catch((error) => runError(error, body.model));
        const settings: ResponseSettings = {
          instructions: body.instructions ?? null,
          metadata: body.metadata,
          previousResponseId: body.previous_response_id ?? null,
          store,
          temperature: body.temperature ?? null,
          topP: body.top_p ?? null,
          maxOutputTokens: body.max_output_tokens ?? null,
        };
        const start = { runId: prepared.runId, model: body.model, createdAt: Math.floor(Date.now() / 1000) };
        if (!stream) {
          const outcome = await engine.execute(prepared, { cancel: clientGone(ctx) });
          if (!outcome.ok) runError(outcome.failure, body.model);
          const { output, usage } = outcome.result;
          return presentResponse({ ...start, status: 'completed', output, usage, error: null }, settings);
        }
        return streamRun(engine, prepared, responseEvents(start, settings), keepAliveMs);
      },
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/v1/responses/:id',
      operationId: 'getResponse',
      summary: 'Get a stored response',
      description:
        "The response as its run stands (`in_progress` while it runs). The request's settings (instructions, metadata, sampling) are not kept: they read null. " +
        'A response made with `store: false`, or any other run without a session, is not found.',
      success: { status: 200, description: 'The response.', raw: ResponseObjectSchema },
      handler: ({ caller, params }) => responseOfRun(storedRun(caller.id, params.id)),
    }),
    defineRoute({
      ...common,
      method: 'delete',
      path: '/v1/responses/:id',
      operationId: 'deleteResponse',
      summary: 'Delete a stored response',
      description:
        'Deletes the run and its turn of the session (a later response continuing the session no longer sees it). A response still in progress: 400.',
      success: { status: 200, description: 'Deleted.', raw: DeletedResponseSchema },
      handler: ({ caller, params }) => {
        const run = storedRun(caller.id, params.id);
        if (run.status === 'running') throw badRequest(null, 'The response is still in progress; delete it once it has finished.');
        if (!runs.deleteRun(caller.id, run.id)) throw responseNotFound(params.id);
        return { id: params.id, object: 'response' as const, deleted: true as const };
      },
    }),
  ];
}
