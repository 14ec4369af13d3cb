// The shapes of one run as the engine handles it: what is asked, the run once prepared, how it
// ended. Preparing (prepare.ts), executing (execute.ts) and child runs (child-runs.ts) share them.
import type { RunAgent } from '../agents/store.js';
import type { RunEmitter } from './events.js';
import type { RunFailure } from './failures.js';
import type { PriorMessage } from './messages.js';
import type { ModelEndpoint } from './model.js';
import type { Admission } from './slots.js';
import type { PendingAction, RunSource, RunStep, RunUsage } from './store.js';
import type { Decision, PausedState } from './approval.js';

/** What POST /agents/{id}/invoke (or predict) asks for, validated. */
export interface RunRequest {
  input: string;
  variables: Record<string, string>;
  sessionId: string | null;
  stream: boolean;
  /** The session an agent with memory uses when `sessionId` is null (default: a new one). */
  defaultSessionId?: string;
  /**
   * The conversation before `input`, oldest first, as the caller holds it (a stateless
   * chat-completions call): given, it takes the place of memory, so no session is replayed or
   * written. The route that takes it bounds it, as it bounds `input`.
   */
  messages?: PriorMessage[];
  /** The caller's own system instructions, added after the agent's prompt in the system message. */
  instructions?: string[];
  /** The run goes on without its client, under RUN_BACKGROUND_TIMEOUT_MS (and may wait `queued`). */
  background?: boolean;
  /** The caller's sampling settings, sent with every model call of the run. */
  sampling?: Sampling;
  /**
   * The session this run is a turn of, whatever the agent's memory (a response continuing an
   * earlier one): its last turns are replayed before `messages` when `replay`, and a successful
   * turn is added to it when `remember`. Given, the agent's own memory rules are not applied.
   */
  session?: { id: string; replay: boolean; remember: boolean };
}

/** Sampling settings a caller passes to the model as they are (chat-completions names). */
export interface Sampling {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  /** Added to the stop words the agent type uses itself (the ReAct loop's). */
  stop?: string[];
  seed?: number;
}

/** A run checked and recorded (`running`), not yet run: hand it to `execute` at once. */
export interface PreparedRun {
  runId: string;
  userId: string;
  agent: RunAgent;
  endpoint: ModelEndpoint;
  /** The agent's filled prompt and the caller's instructions; null: neither (the default system message). */
  system: string | null;
  input: string;
  sessionId: string | null;
  /** A successful turn is added to the session. */
  remembers: boolean;
  /** The session whose last turns are replayed (before `conversation`, when both); null: none. */
  replaySession: string | null;
  /** The caller's sampling settings (RunRequest.sampling). */
  sampling: Sampling | undefined;
  /** The conversation the caller gave (`RunRequest.messages`), replayed instead of the agent's memory. */
  conversation: PriorMessage[] | null;
  stream: boolean;
  /** Goes on without its client (see RunRequest.background). */
  background: boolean;
  /** Its deadline's length (RUN_TIMEOUT_MS, or RUN_BACKGROUND_TIMEOUT_MS for a background run), for the words of a timeout. */
  timeoutMs: number;
  /** Its `run` event was sent when it was queued: `execute` does not send it again. */
  announced: boolean;
  parentRunId: string | null;
  depth: number;
  admission: Admission;
  /** Everything the run reports; subscribe before `execute`, which sends `run` first and an end last. */
  events: RunEmitter;
}

/** A run that waited for approval, as it is taken up again (its record and what it paused with). */
export interface ReopenedRun {
  runId: string;
  sessionId: string | null;
  input: string;
  parentRunId: string | null;
  depth: number;
  remembers: boolean;
  /** The caller's sampling settings, kept with what it paused with. */
  sampling: Sampling | undefined;
}

/** How `execute` runs a prepared run. */
export interface ExecuteOptions {
  /** The client went away: the run is cancelled (with the RunAbort it aborts with, if any). */
  cancel?: AbortSignal;
  /** The run waited for approval and goes on: what it recorded when it paused, and the answers to its calls. */
  resume?: { state: PausedState; decisions: Map<string, Decision> };
}

/** A finished run as invoke answers it. */
export interface RunResult {
  runId: string;
  sessionId: string | null;
  output: string;
  model: string;
  steps: RunStep[];
  sources: RunSource[];
  warnings: string[];
  usage: RunUsage | null;
  ms: number;
}

/**
 * How `execute` ended: the result, or a failure — or the run waits for approval (`waiting`; its
 * failure then says so, for a caller that cannot wait, as a 409 `conflict`).
 */
export type RunOutcome =
  | { ok: true; result: RunResult }
  | { ok: false; runId: string; failure: RunFailure; waiting?: { sessionId: string | null; actions: PendingAction[] } };

/**
 * Runs under way in this process: which agent each runs and its parent (for the cycle check of
 * nested runs), what stops it (cancel) and what resolves once its end is recorded.
 */
export type RunChains = Map<string, { agentId: string; parentRunId: string | null; abort(reason: unknown): void; ended: Promise<unknown> }>;
