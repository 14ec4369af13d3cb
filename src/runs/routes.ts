// Running agents over HTTP: invoke (plain or streamed), the runs it records, the sessions of memory,
// and the original API's predict and traces for its existing clients. A run's failures (RunFailure)
// become HTTP answers here.
import * as v from 'valibot';
import type { AppContext } from '../http/context.js';
import { CredentialLost, formatEvent, KEEP_ALIVE_MS, SseAnswer, type SseStream } from '../http/sse.js';
import { apiError, ApiError, conflict, notFound, validationFailed } from '../http/errors.js';
import { Accepted, defineRoute, type Route } from '../http/route.js';
import type { EventLog } from './event-log.js';
import { followRun } from './follow.js';
import { ListQuerySchema, pageRequest } from '../http/validate.js';
import type { AgentStore } from '../agents/store.js';
import type { RunEngine } from './engine.js';
import type { PreparedRun } from './run.js';
import { isEndEvent, type RunEventListener } from './events.js';
import { RunAbort, RunFailure, waitingMessage } from './failures.js';
import type { MemoryStore } from './memory-store.js';
import type { RunStore } from './store.js';
import { presentRun, presentRunListItem } from './present.js';
import {
  EventsQuerySchema,
  ActionsAcceptedSchema,
  ActionsBodySchema,
  LOG_EVENTS,
  RunAcceptedSchema,
  INVOKE_EVENTS,
  InvokeSchema,
  MessageSchema,
  PredictSchema,
  RunListItemSchema,
  RunResultSchema,
  RunSchema,
  SessionIdSchema,
  SessionSchema,
} from './schema.js';

export interface RunRouteDeps {
  agents: AgentStore;
  runs: RunStore;
  memory: MemoryStore;
  engine: RunEngine;
  /** Every run's events (GET /runs/{id}/events). */
  eventLog: EventLog;
  /** How often an idle stream gets a comment line (15 s; tests shorten it). */
  keepAliveMs?: number;
}

/** The session an agent with memory uses when a v0 predict names none (one per agent, as the original had). */
export const DEFAULT_SESSION = 'default';

/**
 * The HTTP answer of a run that could not run or failed (a RunFailure; anything else is rethrown as
 * is): its code's entry of the error table. A cancelled run's client has gone, so nobody reads it:
 * 499, which the access log shows and the error log does not count as the service's failure.
 */
function httpError(error: unknown, client?: AbortSignal): never {
  if (!(error instanceof RunFailure)) throw error;
  // Cancelled through POST /runs/{id}/cancel while its client waits: the client is told.
  if (error.code === 'cancelled' && client && !client.aborted) throw conflict(error.message);
  if (error.code === 'cancelled') throw new ApiError(499, 'internal', error.message);
  throw apiError(error.code, error.message, error.details, error.code === 'rate_limited' ? 1 : undefined);
}

/** A signal that fires when the client of a plain (not streamed) request goes away before the answer. */
export function clientGone(ctx: AppContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * The stream of `prepared`: `events` (given the opened stream) is subscribed to the run's events and
 * ends the stream at the run's end. The client going away cancels the run; so does the stream's
 * token ceasing to work, which ends the stream: nobody is left to read the run.
 */
export function streamRun(
  engine: RunEngine,
  prepared: PreparedRun,
  events: (sse: SseStream) => RunEventListener,
  keepAliveMs: number,
): SseAnswer {
  return new SseAnswer((sse) => {
    const write = events(sse);
    prepared.events.subscribe(write);
    // `execute` never throws; should it all the same, the stream still ends.
    void engine
      .execute(prepared, { cancel: runCancel(sse.clientGone) })
      .catch(() => write({ name: 'error', data: { code: 'internal', message: 'The run failed unexpectedly.' } }));
  }, keepAliveMs);
}

/** The signal that cancels a streamed run: its stream's `clientGone`, a lost token recorded in the run's words. */
function runCancel(clientGone: AbortSignal): AbortSignal {
  const cancel = new AbortController();
  clientGone.addEventListener(
    'abort',
    () => {
      const reason: unknown = clientGone.reason;
      cancel.abort(
        reason instanceof CredentialLost ? new RunAbort('cancelled', `${reason.message} The run was cancelled with its stream.`) : reason,
      );
    },
    { once: true },
  );
  return cancel.signal;
}

/** A streamed invoke: each event as a named JSON event; the end is sent even to a client that was cut off. */
const invokeEvents =
  (sse: SseStream): RunEventListener =>
  (event) => {
    if (isEndEvent(event)) sse.end(formatEvent(event.name, JSON.stringify(event.data)));
    else sse.event(event.name, event.data);
  };

/**
 * A streamed predict (the original API): the tokens as raw `data:` lines, a failure (a token that
 * stopped working too) as an `error` event with the message, then `[END]`.
 */
const predictEvents = (sse: SseStream): RunEventListener => {
  sse.sayRefusal((message) => [formatEvent('error', message), formatEvent(undefined, '[END]')]);
  return (event) => {
    if (event.name === 'token') sse.text(event.data.text);
    else if (event.name === 'error') sse.end(formatEvent('error', event.data.message), formatEvent(undefined, '[END]'));
    else if (event.name === 'requires_action') {
      const message = waitingMessage(event.data.runId, event.data.actions.length);
      sse.end(formatEvent('error', message), formatEvent(undefined, '[END]'));
    } else if (event.name === 'done') sse.end(formatEvent(undefined, '[END]'));
  };
};

/** The event a stream resumes after: `?after=`, else the `Last-Event-ID` header, else 0 (from the start). */
function resumeAfter(ctx: AppContext, after: number | undefined): number {
  if (after !== undefined) return after;
  const header = ctx.get('Last-Event-ID').trim();
  if (header === '') return 0;
  if (!/^\d{1,15}$/.test(header))
    throw validationFailed([{ path: 'Last-Event-ID', message: 'must be the number of an event (0 or more)' }]);
  return Number(header);
}

export function runRoutes({ agents, runs, memory, engine, eventLog, keepAliveMs = KEEP_ALIVE_MS }: RunRouteDeps): Route[] {
  const tag = 'Runs';
  const agentOf = (userId: string, id: string) => {
    const agent = agents.get(userId, id);
    if (!agent) throw notFound('Agent');
    return agent;
  };

  return [
    defineRoute({
      method: 'post',
      path: '/agents/:id/invoke',
      operationId: 'invokeAgent',
      summary: 'Run an agent',
      description:
        "The agent's prompt, filled with `variables`, is the system message, with the best excerpts of its ready documents; an agent with memory also gets the session's last turns. " +
        'With `stream: true` the answer is a `text/event-stream` of named JSON events (a comment line every 15 s keeps it open); errors found before the run starts are still JSON. ' +
        'A stream whose API token stops working (revoked, expired, its account deleted or disabled) ends within seconds with an `error` event `unauthorized`; the run is cancelled, as when the client leaves, unless it is a background run. ' +
        'Failures of the model side: 502 `upstream_error` or `max_steps`, 504 `upstream_timeout`; more than RUN_CONCURRENCY_PER_USER runs at once: 429. ' +
        'With `background: true` the run goes on without its client, under RUN_BACKGROUND_TIMEOUT_MS: 202 at once (beyond RUN_CONCURRENCY_PER_USER it waits `queued`, up to RUN_QUEUE_PER_USER; then 429), ' +
        'or with `stream: true` its event stream as GET /runs/{id}/events sends it. Follow it with GET /runs/{id} or GET /runs/{id}/events. ' +
        'When the model calls a tool whose agent-tool link has `requiresApproval`, the call is not made: the run waits `requires_action` (its slot given up) — ' +
        'a plain invoke answers 202 `{ runId, sessionId, status: "requires_action", actions }`, a stream ends with a `requires_action` event — until POST /runs/{id}/actions answers the calls.',
      tag,
      auth: true,
      body: InvokeSchema,
      errors: [502, 504],
      success: {
        status: 200,
        description: 'The answer (or, streamed, its events).',
        stream: { events: INVOKE_EVENTS },
        json: RunResultSchema,
        accepted: {
          description:
            'A background run, recorded: it goes on (or waits `queued`); or a run that waits for approval of tool calls (`actions`).',
          data: RunAcceptedSchema,
        },
      },
      handler: async ({ ctx, caller, params, body }) => {
        if (body.background) {
          const started = await engine.startBackground(caller.id, params.id, body).catch((error) => httpError(error));
          if (body.stream) return followRun({ log: eventLog, runs }, caller.id, started.runId, 0, keepAliveMs);
          return new Accepted({ runId: started.runId, sessionId: started.sessionId, status: started.status });
        }
        const prepared = await engine.prepare(caller.id, params.id, body).catch((error) => httpError(error));
        if (!body.stream) {
          const gone = clientGone(ctx);
          const outcome = await engine.execute(prepared, { cancel: gone });
          if (!outcome.ok && outcome.waiting) {
            const { sessionId, actions } = outcome.waiting;
            return new Accepted({ runId: outcome.runId, sessionId, status: 'requires_action' as const, actions });
          }
          if (!outcome.ok) httpError(outcome.failure, gone);
          return outcome.result;
        }
        return streamRun(engine, prepared, invokeEvents, keepAliveMs);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/agents/:id/predict',
      operationId: 'predictAgent',
      summary: 'Run an agent (the original API)',
      description:
        'For clients of the original API: `{ input: { input, ...variables }, has_streaming, session }`. Not streamed: `data` is the answer text. ' +
        'Streamed: each token as a raw `data:` line (a token holding a line break spans several `data:` lines of one event), then `data: [END]`; ' +
        'a failure after the stream began is an `error` event with the message, then `data: [END]`. An agent with memory and no `session` uses one default session; ' +
        'the session is also sent as the `X-Session-Id` header.',
      tag,
      auth: true,
      body: PredictSchema,
      errors: [502, 504],
      success: {
        status: 200,
        description: 'The answer text (or, streamed, its tokens).',
        stream: {
          events: {
            '(unnamed)': 'a piece of the answer, as text; the last is `[END]`.',
            error: 'the failure, as text, followed by `data: [END]`.',
          },
        },
        json: v.string(),
      },
      handler: async ({ ctx, caller, params, body }) => {
        const stream = body.has_streaming ?? body.hasStreaming ?? false;
        const request = {
          input: body.input.input,
          variables: body.input.variables,
          sessionId: body.session ?? null,
          defaultSessionId: DEFAULT_SESSION,
          stream,
        };
        const prepared = await engine.prepare(caller.id, params.id, request).catch((error) => httpError(error));
        // Sent with the answer, a failure of the run and the stream alike.
        if (prepared.sessionId !== null) ctx.set('X-Session-Id', encodeURIComponent(prepared.sessionId));
        if (!stream) {
          const gone = clientGone(ctx);
          const outcome = await engine.execute(prepared, { cancel: gone });
          if (!outcome.ok) httpError(outcome.failure, gone);
          return outcome.result.output;
        }
        return streamRun(engine, prepared, predictEvents, keepAliveMs);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/agents/:id/runs',
      operationId: 'listAgentRuns',
      summary: "List an agent's runs",
      tag,
      auth: true,
      query: ListQuerySchema,
      success: {
        status: 200,
        description: "A page of the agent's runs, newest first, their long parts cut (`truncated`).",
        page: RunListItemSchema,
      },
      handler: ({ caller, params, query }) => {
        agentOf(caller.id, params.id);
        const page = runs.listAgentRuns(
          caller.id,
          params.id,
          pageRequest(query, (id) => runs.seqOfRun(caller.id, id, params.id)),
        );
        return { rows: page.rows.map(presentRunListItem), hasMore: page.hasMore };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs/:id',
      operationId: 'getRun',
      summary: 'Get a run',
      tag,
      auth: true,
      success: { status: 200, description: 'The run.', data: RunSchema },
      handler: ({ caller, params }) => {
        const run = runs.getRun(caller.id, params.id);
        if (!run) throw notFound('Run');
        return presentRun(run);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs/:id/events',
      operationId: 'getRunEvents',
      summary: "Follow a run's events",
      description:
        "A `text/event-stream` of the run's events from the start (or after `?after=<n>` / the `Last-Event-ID` header), then, while the run goes on, its new events as they come; " +
        'it ends after `done`, `error` or `requires_action` (at once for a run that already ended). Every event carries `id: <n>`; resume after the last one received. ' +
        'Once the API token stops working (revoked, expired, its account deleted or disabled), the stream ends within seconds with an `error` event `unauthorized` without `id:`; the run goes on.',
      tag,
      auth: true,
      query: EventsQuerySchema,
      success: { status: 200, description: "The run's events.", stream: { events: LOG_EVENTS } },
      handler: ({ ctx, caller, params, query }) => {
        const after = resumeAfter(ctx, query.after);
        if (!runs.getRun(caller.id, params.id)) throw notFound('Run');
        return followRun({ log: eventLog, runs }, caller.id, params.id, after, keepAliveMs);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/:id/cancel',
      operationId: 'cancelRun',
      summary: 'Cancel a run',
      description:
        'A `queued`, `running` or `requires_action` run becomes `cancelled` (a running one is stopped, its model request aborted; its events end with `error` `{ code: "cancelled" }`). ' +
        'Answers the run once that is recorded; a run that already ended: 409.',
      tag,
      auth: true,
      errors: [409],
      success: { status: 200, description: 'The run, cancelled.', data: RunSchema },
      handler: async ({ caller, params }) => {
        const result = await engine.cancel(caller.id, params.id);
        if (result === 'not_found') throw notFound('Run');
        const run = runs.getRun(caller.id, params.id);
        if (!run) throw notFound('Run');
        if (result === 'ended') throw conflict(`The run has already ended (${run.status}); there is nothing to cancel.`);
        return presentRun(run);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/:id/actions',
      operationId: 'answerRunActions',
      summary: "Answer a run's tool calls waiting for approval",
      description:
        'A `requires_action` run waits until every call in its `actions` is answered, in one request: `approve: true` makes the call, `approve: false` tells the model ' +
        '"The user denied this call" with the `reason`. Answers 202 `{ runId, status }`: the run goes on in the background (under RUN_BACKGROUND_TIMEOUT_MS, in one of the ' +
        "user's RUN_CONCURRENCY_PER_USER slots: `running`; none free, `queued` until one is, before the user's other queued runs), in the same event log — " +
        'follow it with GET /runs/{id}/events. A call of a nested agent run ' +
        "(an AGENT tool's) is listed, and answered, in the top run (its `runId` names the nested run). A missing, unknown or repeated id: 422 naming it; " +
        'a run not waiting, or a nested run: 409. A waiting run keeps waiting across restarts, and fails `approval_expired` after RUN_APPROVAL_TTL_MS.',
      tag,
      auth: true,
      body: ActionsBodySchema,
      errors: [409],
      success: { status: 202, description: 'The answers are taken: the run goes on.', data: ActionsAcceptedSchema },
      handler: ({ caller, params, body }) => {
        let answered: ReturnType<RunEngine['answer']>;
        try {
          answered = engine.answer(caller.id, params.id, body.actions);
        } catch (error) {
          httpError(error);
        }
        if (answered.status === 'not_found') throw notFound('Run');
        if (answered.status === 'conflict') throw conflict(answered.message);
        if (answered.status === 'invalid') throw validationFailed(answered.details);
        return { runId: params.id, status: answered.status };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/traces',
      operationId: 'listTraces',
      summary: "List the caller's runs (the original API's traces)",
      tag,
      auth: true,
      query: ListQuerySchema,
      success: {
        status: 200,
        description: "A page of the caller's runs, every agent's, newest first, their long parts cut (`truncated`).",
        page: RunListItemSchema,
      },
      handler: ({ caller, query }) => {
        const page = runs.listUserRuns(
          caller.id,
          pageRequest(query, (id) => runs.seqOfRun(caller.id, id)),
        );
        return { rows: page.rows.map(presentRunListItem), hasMore: page.hasMore };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/agents/:id/sessions',
      operationId: 'listAgentSessions',
      summary: "List an agent's memory sessions",
      tag,
      auth: true,
      query: v.object({ ...ListQuerySchema.entries, after: v.optional(SessionIdSchema) }),
      success: { status: 200, description: 'A page of sessions, oldest first.', page: SessionSchema },
      handler: ({ caller, params, query }) => {
        agentOf(caller.id, params.id);
        const page = memory.listSessions(
          params.id,
          pageRequest(query, (id) => memory.seqOfSession(params.id, id)),
        );
        return page;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/agents/:id/sessions/:sessionId/messages',
      params: { sessionId: SessionIdSchema },
      operationId: 'listSessionMessages',
      summary: "List a session's messages",
      description: 'Only the inputs and final answers; tool steps live in the run.',
      tag,
      auth: true,
      query: ListQuerySchema,
      success: { status: 200, description: 'A page of messages, oldest first.', page: MessageSchema },
      handler: ({ caller, params, query }) => {
        agentOf(caller.id, params.id);
        if (!memory.getSession(params.id, params.sessionId)) throw notFound('Session');
        return memory.listMessages(
          params.id,
          params.sessionId,
          pageRequest(query, (id) => memory.seqOfMessage(params.id, params.sessionId, id)),
        );
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/agents/:id/sessions/:sessionId',
      params: { sessionId: SessionIdSchema },
      operationId: 'deleteAgentSession',
      summary: 'Delete a memory session',
      description: 'Deletes the session and its messages; the runs stay.',
      tag,
      auth: true,
      success: { status: 200, description: 'Deleted: data is null.', data: v.null() },
      handler: ({ caller, params }) => {
        agentOf(caller.id, params.id);
        if (!memory.deleteSession(params.id, params.sessionId)) throw notFound('Session');
        return null;
      },
    }),
  ];
}
