// Following a run through its event log (GET /runs/{id}/events, and a streamed background invoke):
// the events after the one the client names are replayed from the database in parts — each part
// sent once the client has taken most of the last — and, once the replay has caught up with a run
// still going, its new events are sent as they come. Every event carries `id: <n>`; the stream
// ends after `done`, `error` or `requires_action`, or at once for a run whose log has ended. A
// `requires_action` the run went on from (its calls were answered) is replayed like any event.
// The events are sent as the log numbers them unless the caller says them otherwise (the OpenAI
// Responses API maps them to its semantic events).
import { formatEvent, SseAnswer, type SseStream } from '../http/sse.js';
import type { EventLog, NumberedEvent } from './event-log.js';
import type { RunStore } from './store.js';

/** Events read from the database at once while replaying. */
const REPLAY_PAGE = 500;

const ENDS = new Set(['done', 'error', 'requires_action']);

/**
 * How a follower says the log's events: given the stream, what sends one event (each once, in
 * order) and ends the stream with the event that `ends` it.
 */
export type LogWriter = (sse: SseStream) => (event: NumberedEvent, ends: boolean) => void;

/** The log's events as they are: named, each with `id: <n>`. */
const asLogged: LogWriter = (sse) => (event, ends) => {
  const text = formatEvent(event.name, event.data, event.seq);
  if (ends) sse.end(text);
  else sse.send(text);
};

/** The stream of `runId`'s events after number `after`, for its owner `userId`, said by `writer`. */
export function followRun(
  deps: { log: EventLog; runs: RunStore },
  userId: string,
  runId: string,
  after: number,
  keepAliveMs: number,
  writer: LogWriter = asLogged,
) {
  return new SseAnswer((sse) => void follow(deps, sse, userId, runId, after, writer(sse)), keepAliveMs);
}

async function follow(
  { log, runs }: { log: EventLog; runs: RunStore },
  sse: SseStream,
  userId: string,
  runId: string,
  after: number,
  write: (event: NumberedEvent, ends: boolean) => void,
) {
  let last = after;
  /** Sends one event (`passed`: a `requires_action` the run went on from); true when it ended the stream. */
  const send = (event: NumberedEvent, passed = false): boolean => {
    if (sse.closed) return true;
    const ends = !passed && ENDS.has(event.name);
    if (event.seq <= last) {
      // Not sent (the client named a later event), but an end still ends the stream: nothing follows it.
      if (ends) sse.end();
      return ends;
    }
    last = event.seq;
    write(event, ends);
    if (!ends) return false;
    sse.end(); // the writer has ended it already
    return true;
  };
  for (;;) {
    const run = runs.getRun(userId, runId);
    if (!run) return sse.end(); // deleted with its agent meanwhile
    const page = log.read(run, last, REPLAY_PAGE, (event) => {
      if (send(event)) unfollow();
    });
    const unfollow = () => {
      page.unfollow();
      sse.clientGone.removeEventListener('abort', unfollow);
    };
    for (const [index, event] of page.events.entries()) {
      // A wait ends the stream only while the run still waits: it is the last event of a log that is not going on.
      const waitsNow = page.ended && index === page.events.length - 1;
      if (send(event, event.name === 'requires_action' && !waitsNow)) return unfollow();
    }
    if (page.more) {
      await sse.room();
      if (sse.closed) return;
      continue;
    }
    if (page.ended) return sse.end();
    // Following live: the follower ends the stream with the run's end, or the client leaves first.
    sse.clientGone.addEventListener('abort', unfollow, { once: true });
    return;
  }
}
