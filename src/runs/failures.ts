// How a run fails: one error type with a stable code and words safe to show (never a key). The
// engine only throws and returns these; each code but `cancelled` is one of the service's error
// codes, so its HTTP answer is the one the error table gives it.
import type { ErrorCode, FieldIssue } from '../http/errors.js';
import { ClientGone } from '../http/sse.js';
import type { ModelEndpoint } from './model.js';

export type FailureCode =
  | Extract<
      ErrorCode,
      // Decided before the run is recorded: the request cannot run as it stands.
      | 'not_found'
      | 'validation_failed'
      | 'rate_limited'
      // Anything after (and a shutdown or timeout during the checks).
      | 'upstream_error'
      | 'upstream_timeout'
      | 'max_steps'
      | 'unavailable'
      | 'internal'
      // The run waits for approval of tool calls (answered to a caller that cannot wait).
      | 'conflict'
    >
  // The client went away: nobody reads the answer.
  | 'cancelled';

/** Why a run could not run or did not finish: a code, and a message safe to show. */
export class RunFailure extends Error {
  override readonly name = 'RunFailure';
  constructor(
    readonly code: FailureCode,
    message: string,
    /** For `validation_failed`: the fields at fault. */
    readonly details?: FieldIssue[],
  ) {
    super(message);
  }
}

/** A request the agent cannot run as configured; `details` name the fields (as a 422 does). */
export const invalidRun = (details: FieldIssue[]) =>
  new RunFailure('validation_failed', `Invalid ${details.map((issue) => issue.path || 'body').join(', ')}.`, details);

/** What a caller that cannot wait is told of a run waiting for approval of `count` tool calls. */
export const waitingMessage = (runId: string, count: number) =>
  `The run waits for approval of ${count} tool call${count === 1 ? '' : 's'}: answer with POST /api/v1/runs/${runId}/actions.`;

export const agentNotFound = () => new RunFailure('not_found', 'Agent not found.');

export const shuttingDown = () => new RunFailure('unavailable', 'The service is shutting down; try again shortly.');

/** What stopped a run from outside its own work: the reason its signal aborts with. */
export type AbortKind = 'timeout' | 'cancelled' | 'shutdown';

export class RunAbort extends Error {
  constructor(
    readonly kind: AbortKind,
    /** Overrides the usual words for this kind (a stream that cut off a slow client says so). */
    readonly said?: string,
  ) {
    super(`run ${kind}`);
    this.name = 'AbortError';
  }
}

/** The abort a run's `cancel` signal stands for: a stream's client that stopped reading is named as such. */
export function cancelAbort(reason: unknown): RunAbort {
  if (reason instanceof RunAbort) return reason;
  if (reason instanceof ClientGone && reason.unreadBytes !== undefined) {
    return new RunAbort(
      'cancelled',
      `The client did not read the stream: more than ${reason.unreadBytes} bytes waited to be sent, so the run was cancelled.`,
    );
  }
  return new RunAbort('cancelled');
}

const MAX_ERROR_TEXT = 500;
/** How much of a tool's error message is kept for the model and the steps. */
export const MAX_TOOL_ERROR_TEXT = MAX_ERROR_TEXT * 2;

/** `text` without the endpoint's key (or anything shaped like a key), cut to `max` characters. */
export function redact(text: string, endpoint: ModelEndpoint, max = MAX_ERROR_TEXT): string {
  let clean = text;
  if (endpoint.apiKey.length >= 4) clean = clean.split(endpoint.apiKey).join('[redacted]');
  clean = clean.replace(/\b(sk|key|token)-[A-Za-z0-9_*.-]{6,}/gi, '$1-[redacted]');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** The failure an aborted run's signal stands for, or undefined when it was not aborted by us. */
export function abortFailure(
  signal: AbortSignal,
  timeoutMs: number,
  during: 'check' | 'run' = 'run',
  /** The setting that gave the deadline (a background run's is RUN_BACKGROUND_TIMEOUT_MS). */
  setting = 'RUN_TIMEOUT_MS',
): RunFailure | undefined {
  if (!signal.aborted || !(signal.reason instanceof RunAbort)) return undefined;
  const { kind, said } = signal.reason;
  if (kind === 'timeout') {
    return new RunFailure(
      'upstream_timeout',
      during === 'check'
        ? `The host of the agent's llm.baseUrl could not be resolved within ${timeoutMs} ms (${setting}).`
        : `The run did not finish within ${timeoutMs} ms (${setting}).`,
    );
  }
  if (kind === 'shutdown') {
    return during === 'check'
      ? shuttingDown()
      : new RunFailure('unavailable', 'The service is shutting down; the run was stopped. Run it again.');
  }
  return new RunFailure('cancelled', said ?? 'The client disconnected; the run was cancelled.');
}
