// Following a run through its event log (GET /runs/{id}/events): a fetch read as a stream, since
// EventSource cannot send the Authorization header. Every event of the log is numbered; when the
// connection drops before the end, the log is asked again for the events after the last one seen,
// so nothing is shown twice or lost. A page opened again replays the log from the start.
import { ApiError, get, send, type Run } from './api.js';
import { END_EVENTS } from './run-progress.js';
import { readEvents } from './sse.js';

/** Tries in a row without a new event before the follower gives up (a second apart). */
const RETRIES = 5;
const RETRY_MS = 1000;

export type RunEventHandler = (name: string, data: unknown) => void;

/** How a stream of a run's events ended: its end event's name, and the number of the last event seen. */
export interface FollowEnd {
  end: string;
  last: number;
}

/**
 * Calls `onEvent` with each event of run `runId` after number `after`, as they come, until the
 * stream's end event. A `requires_action` ends the stream too: once the calls are answered, the run
 * goes on in the same log, after `last`. Rejects with an AbortError when `signal` fires,
 * with the ApiError of a refused request (404: no such run), or once the service stays out of reach.
 */
export async function followRunEvents(runId: string, onEvent: RunEventHandler, signal: AbortSignal, after = 0): Promise<FollowEnd> {
  let last = after;
  let failures = 0;
  for (;;) {
    try {
      const response = await send('GET', `/runs/${encodeURIComponent(runId)}/events?after=${last}`, { raw: true, signal });
      if (!response.body) throw new ApiError(0, 'network', 'The service sent no events.');
      for await (const event of readEvents(response.body)) {
        const seq = Number(event.id);
        if (Number.isSafeInteger(seq) && seq > last) last = seq;
        failures = 0;
        let data: unknown = null;
        try {
          data = JSON.parse(event.data);
        } catch {
          // not JSON: handed on as null
        }
        onEvent(event.event, data);
        if (END_EVENTS.has(event.event)) return { end: event.event, last };
      }
    } catch (error) {
      if ((error as Error).name === 'AbortError' || (error instanceof ApiError && error.status !== 0)) throw error;
      // The connection dropped (a network change, the service restarting): resumed below.
    }
    if (signal.aborted) throw new DOMException('The follower was stopped.', 'AbortError');
    if (++failures > RETRIES) throw new ApiError(0, 'network', 'The run could not be followed: the service is out of reach.');
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

/**
 * Follows run `runId` to its end: past each `requires_action` the run has gone on from (its calls
 * answered meanwhile), on in the same log. Ends at the run's `done` or `error`, or at a wait that
 * still waits.
 */
export async function followRun(runId: string, onEvent: RunEventHandler, signal: AbortSignal, after = 0): Promise<FollowEnd> {
  for (;;) {
    const result = await followRunEvents(runId, onEvent, signal, after);
    if (result.end !== 'requires_action') return result;
    const run = await get<Run>(`/runs/${encodeURIComponent(runId)}`, signal);
    if (run.status !== 'queued' && run.status !== 'running') return result;
    after = result.last;
  }
}
