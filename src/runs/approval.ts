// Tool approval. When the model calls a function whose agent-tool link asks for approval, the call
// is not made: the run pauses (`requires_action`) in the middle of that model reply's calls, with
// what it needs to go on written to its record — the conversation so far, the reply's calls and
// the results of those already made, its counters — and gives up its slot. A nested agent run
// (the AGENT tool) that pauses pauses its caller too: the caller's call waits on it, and the
// caller lists the nested run's calls as its own (each naming the run that really waits). A
// person's answers (POST /runs/{id}/actions) resume the top run, which resumes the nested ones
// from inside its waiting calls, each taking up its own conversation where it stopped.
import type { ChatMessage, ToolCallRequest } from './messages.js';
import type { ToolCallResult } from './strategies.js';
import type { PendingAction, RunStore } from './store.js';
import type { Sampling } from './run.js';

/** A person's answer to one waiting call. */
export interface Decision {
  approve: boolean;
  reason?: string;
}

/** One call of a paused batch that waits: for approval itself, or on a nested run that waits. */
export type WaitingCall =
  | { index: number; kind: 'approval'; actionId: string }
  | {
      index: number;
      kind: 'child';
      runId: string;
      agentId: string;
      /** The ids this run lists the nested run's calls under (`id`), and the nested run's own (`childId`). */
      ids: { id: string; childId: string }[];
    };

/** The calls of one model reply a run paused in. */
export interface PausedBatch {
  calls: ToolCallRequest[];
  /** Each call's result; null while it waits. */
  results: (ToolCallResult | null)[];
  waiting: WaitingCall[];
  /** The strategy's own note to go on from (JSON: see StrategyContext.callTools). */
  memo: unknown;
}

/** What a waiting run resumes from (its record's `state`). */
export interface PausedState {
  /** The strategy's conversation, the reply whose calls wait included. */
  messages: ChatMessage[];
  batch: PausedBatch;
  /** Tool calls made, model calls made, bytes of answer streamed: the run's bounds go on counting from them. */
  counters: { toolCalls: number; modelSteps: number; tokenBytes: number };
  /** A successful end adds the turn to the session's memory. */
  remembers: boolean;
  depth: number;
  /** The caller's sampling settings, sent with the model calls after it resumes too (absent: none, or paused before they were kept). */
  sampling?: Sampling;
}

/** Thrown through a strategy when calls of a model reply wait: the run pauses. */
export class RunPaused extends Error {
  constructor(
    readonly batch: PausedBatch,
    /** The calls that wait, as the run lists them. */
    readonly actions: PendingAction[],
  ) {
    super('the run waits for approval');
    this.name = 'RunPaused';
  }
}

/** Longest id a waiting call is listed under (a model's call id is its own text). */
const MAX_ACTION_ID = 64;

/** `base` (cut, never empty) made unique among `taken` with `_2`, `_3` …, and taken. */
export function uniqueActionId(base: string, taken: Set<string>): string {
  const start = base.slice(0, MAX_ACTION_ID) || 'call';
  let id = start;
  for (let n = 2; taken.has(id); n += 1) id = `${start}_${n}`;
  taken.add(id);
  return id;
}

/** What a model reply's waiting calls add up to while they are gathered: the entries and the listed actions. */
export interface Waiting {
  entries: WaitingCall[];
  actions: PendingAction[];
  taken: Set<string>;
}

export const noneWaiting = (): Waiting => ({ entries: [], actions: [], taken: new Set() });

/** Adds the calls of a nested run that waits (called by the call at `index`) to `waiting`. */
export function addWaitingChild(
  waiting: Waiting,
  index: number,
  child: { runId: string; agentId: string; actions: PendingAction[] },
): void {
  const ids: { id: string; childId: string }[] = [];
  for (const action of child.actions) {
    const id = uniqueActionId(action.id, waiting.taken);
    ids.push({ id, childId: action.id });
    waiting.actions.push({ ...action, id, runId: action.runId ?? child.runId, agentId: action.agentId ?? child.agentId });
  }
  waiting.entries.push({ index, kind: 'child', runId: child.runId, agentId: child.agentId, ids });
}

/** The nested run's own answers among `decisions` (given under the ids this run lists its calls). */
export function childDecisions(entry: Extract<WaitingCall, { kind: 'child' }>, decisions: Map<string, Decision>): Map<string, Decision> {
  const own = new Map<string, Decision>();
  for (const { id, childId } of entry.ids) {
    const decision = decisions.get(id);
    if (decision) own.set(childId, decision);
  }
  return own;
}

/** What the model is told of a call the user denied. */
export const deniedCall = (reason: string | undefined) =>
  reason && reason.trim() !== '' ? `The user denied this call: ${reason.trim()}` : 'The user denied this call.';

/**
 * Ends a run that waits (or is under way) as it stands, and every nested run its calls wait on,
 * in one transaction: when it is cancelled, its approval expired, or its caller ended without it.
 */
export function endWaitingChain(
  runs: RunStore,
  runId: string,
  status: 'failed' | 'cancelled',
  reason: string,
  code: string,
  /** What it paused with, when it was read already (a run taken up is no longer waiting: its record lost it). */
  state = runs.stateOf(runId) as PausedState | undefined,
): boolean {
  return runs.transaction(() => {
    const ended = runs.endUnderWay(runId, status, reason, code);
    for (const entry of state?.batch.waiting ?? []) {
      if (entry.kind === 'child') endWaitingChain(runs, entry.runId, status, reason, code);
    }
    return ended;
  });
}
