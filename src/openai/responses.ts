// The Responses API under /v1: a response is a run (`resp_<run id>`), and its conversation is the
// run's session, whether or not the agent has memory: `previous_response_id` continues that session
// (its last turns are replayed, the new turn added), and `store: false` keeps no session, so such a
// response can be neither continued nor read back (its run is recorded all the same). A background
// response is a durable run: answered at once, read back, streamed again from its run's event log
// (resuming after a `sequence_number`) and cancelled.
import type { AgentStore } from '../agents/store.js';
import type { AppMiddleware } from '../http/context.js';
import { defineRoute, type ErrorFormat, type Route } from '../http/route.js';
import { newId } from '../lib/ids.js';
import type { RunEngine } from '../runs/engine.js';
import type { EventLog } from '../runs/event-log.js';
import { followRun } from '../runs/follow.js';
import type { RunRequest } from '../runs/run.js';
import { clientGone, streamRun } from '../runs/routes.js';
import type { RunRow, RunStore } from '../runs/store.js';
import { badRequest, responseNotFound, runError } from './errors.js';
import { presentResponse, RESPONSE_ID_PREFIX, responseOfRun, UNKNOWN_SETTINGS, unixSeconds, type ResponseSettings } from './present.js';
import { conversationOf, samplingOf, type Conversation } from './conversation.js';
import { DeletedResponseSchema, RESPONSE_EVENTS, ResponseObjectSchema, ResponseQuerySchema, ResponseRequestSchema } from './schema.js';
import { responseEvents, responseLogWriter } from './streams.js';

interface ResponseRouteDeps {
  agents: AgentStore;
  runs: RunStore;
  engine: RunEngine;
  /** Every run's events: a background response's stream is read from it. */
  eventLog: EventLog;
  keepAliveMs: number;
  /** What every /v1 route declares alike. */
  common: { root: true; tag: string; auth: true; before: AppMiddleware[]; errorFormat: ErrorFormat };
}

const RESPONSE_SAMPLING = ['temperature', 'top_p', 'seed'] as const;

/** The run id a response id names, or undefined when it is not a response id. */
const runIdOf = (responseId: string) =>
  responseId.startsWith(RESPONSE_ID_PREFIX) ? responseId.slice(RESPONSE_ID_PREFIX.length) : undefined;

/** What a response's stream shows of its run from the start. */
const startOf = (run: RunRow) => ({ runId: run.id, model: run.agentId, createdAt: unixSeconds(run.startedAt) });

export function responseRoutes({ runs, engine, eventLog, keepAliveMs, common }: ResponseRouteDeps): Route[] {
  /** The stream of a background response's events after number `startingAfter` (-1: all of them). */
  const followResponse = (userId: string, run: RunRow, settings: ResponseSettings, startingAfter: number) =>
    followRun({ log: eventLog, runs }, userId, run.id, 0, keepAliveMs, responseLogWriter(startOf(run), settings, startingAfter));

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
        'With `stream: true` the answer is the semantic events, each with `sequence_number`. ' +
        '`background: true` runs it as a durable run that goes on without the client (under RUN_BACKGROUND_TIMEOUT_MS, queued beyond RUN_CONCURRENCY_PER_USER): ' +
        'the response is answered at once, `queued` or `in_progress` (with `stream: true`, its events as they come, a disconnect not stopping it); follow it with GET /v1/responses/{id}. ' +
        'A background response is stored (`store: false` with it: 400). Errors as for chat completions.',
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
        const background = body.background === true;
        if (background && !store)
          throw badRequest('store', 'A background response is stored to be read back: background requires store to be true.');
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
        const settings: ResponseSettings = {
          instructions: body.instructions ?? null,
          metadata: body.metadata,
          previousResponseId: body.previous_response_id ?? null,
          store,
          temperature: body.temperature ?? null,
          topP: body.top_p ?? null,
          maxOutputTokens: body.max_output_tokens ?? null,
        };
        if (background) {
          const started = await engine.startBackground(caller.id, body.model, request).catch((error) => runError(error, body.model));
          const run = runs.getRun(caller.id, started.runId);
          if (!run) throw responseNotFound(RESPONSE_ID_PREFIX + started.runId); // its agent deleted at once
          if (stream) return followResponse(caller.id, run, settings, -1);
          const status = started.status === 'queued' ? 'queued' : 'in_progress';
          return presentResponse({ ...startOf(run), status, output: null, usage: null, error: null }, settings);
        }
        const prepared = await engine.prepare(caller.id, body.model, request).catch((error) => runError(error, body.model));
        const start = { runId: prepared.runId, model: body.model, createdAt: Math.floor(Date.now() / 1000) };
        if (!stream) {
          const client = clientGone(ctx);
          const outcome = await engine.execute(prepared, { cancel: client });
          // Waiting for tool calls to be approved: incomplete, answered through POST /api/v1/runs/{id}/actions.
          if (!outcome.ok && outcome.waiting)
            return presentResponse({ ...start, status: 'incomplete', output: null, usage: null, error: null }, settings);
          if (!outcome.ok) runError(outcome.failure, body.model, client);
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
        "The response as its run stands (`queued`, then `in_progress` while it runs; `incomplete` while it waits for tool calls to be approved). The request's settings (instructions, metadata, sampling) are not kept: they read null. " +
        'A response made with `store: false`, or any other run without a session, is not found. ' +
        'A background response with `stream=true`: its semantic events again, from the start or after `starting_after` (a `sequence_number`), then live until it ends; the numbers are the same on every read.',
      query: ResponseQuerySchema,
      success: {
        status: 200,
        description: 'The response (or its events).',
        stream: { events: RESPONSE_EVENTS },
        raw: ResponseObjectSchema,
      },
      handler: ({ caller, params, query }) => {
        const run = storedRun(caller.id, params.id);
        if (query.stream !== 'true') return responseOfRun(run);
        if (!run.background) throw badRequest('stream', 'Only a response created with background: true can be streamed again.');
        return followResponse(caller.id, run, UNKNOWN_SETTINGS, query.starting_after ?? -1);
      },
    }),
    defineRoute({
      ...common,
      method: 'post',
      path: '/v1/responses/:id/cancel',
      operationId: 'cancelResponse',
      summary: 'Cancel a background response',
      description:
        'A background response `queued`, `in_progress` or `incomplete` (waiting for approval) is stopped and answered `cancelled`. ' +
        'One not made with `background: true`, or already finished: 400, as OpenAI answers.',
      success: { status: 200, description: 'The response, cancelled.', raw: ResponseObjectSchema },
      handler: async ({ caller, params }) => {
        const run = storedRun(caller.id, params.id);
        if (!run.background) throw badRequest(null, 'Only a response created with background: true can be cancelled.');
        const result = await engine.cancel(caller.id, run.id);
        const now = runs.getRun(caller.id, run.id);
        if (result === 'not_found' || !now) throw responseNotFound(params.id);
        if (result === 'ended')
          throw badRequest(null, `The response has already finished (${responseOfRun(now).status}): there is nothing to cancel.`);
        return responseOfRun(now);
      },
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
        if (run.status === 'running' || run.status === 'queued')
          throw badRequest(null, 'The response is still in progress; delete it once it has finished.');
        if (!runs.deleteRun(caller.id, run.id)) throw responseNotFound(params.id);
        return { id: params.id, object: 'response' as const, deleted: true as const };
      },
    }),
  ];
}
