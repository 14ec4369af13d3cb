// Everything a run reports goes through one emitter per run, in the order it happens: its start
// (`run`), the answer's pieces, its tool calls and their results, the document excerpts it was
// given, and exactly one end (`done`, `error`, or `requires_action` when it waits for approval), after which nothing more is sent. A streamed
// response subscribes to the run's emitter; whatever keeps or forwards what every run does (an
// event log, webhooks) observes all runs through the engine. The names and data are those of a
// streamed invoke, so a subscriber can pass them on as they are.
import type { FailureCode } from './failures.js';
import type { RunResult } from './run.js';
import type { PendingAction, RunSource } from './store.js';

/** The model called a tool (`input`: its arguments, or the text it wrote when they are not JSON). */
export interface ToolCallEvent {
  id: string;
  tool: string;
  function: string;
  input: unknown;
}

/** What a tool call came to: its output, or the error the model was told. */
export interface ToolResultEvent {
  id: string;
  output?: string;
  error?: string;
}

export type RunEvent =
  | { name: 'run'; data: { runId: string; sessionId: string | null } }
  | { name: 'token'; data: { text: string } }
  | { name: 'tool_call'; data: ToolCallEvent }
  | { name: 'tool_result'; data: ToolResultEvent }
  | { name: 'sources'; data: RunSource[] }
  | RunEndEvent;

/**
 * How a run's events end: its result, why it failed, or the tool calls it waits for a person to
 * approve (then it goes on later, in the same log, with a new emitter).
 */
export type RunEndEvent =
  | { name: 'done'; data: RunResult }
  | { name: 'error'; data: { code: FailureCode | 'cancelled' | 'interrupted' | 'approval_expired'; message: string } }
  | { name: 'requires_action'; data: { runId: string; actions: PendingAction[] } };

export const isEndEvent = (event: RunEvent): event is RunEndEvent =>
  event.name === 'done' || event.name === 'error' || event.name === 'requires_action';

export type RunEventListener = (event: RunEvent) => void;

/** Which run an observed event belongs to. */
export interface RunInfo {
  runId: string;
  userId: string;
  agentId: string;
  parentRunId: string | null;
}

/** Sees every event of every run (the engine's `observe`). */
export type RunObserver = (run: RunInfo, event: RunEvent) => void;

/** One run's events: subscribe to them; the engine emits them. */
export interface RunEmitter {
  /** Adds a listener for the events still to come; returns what removes it. */
  subscribe(listener: RunEventListener): () => void;
  /** Sends `event` to every listener, in the order they subscribed; nothing is sent after an end. */
  emit(event: RunEvent): void;
}

/**
 * A run's emitter. A listener that throws does not stop the run nor the other listeners: its error
 * goes to `onListenerError`.
 */
export function createRunEmitter(onListenerError: (error: unknown) => void): RunEmitter {
  let listeners: RunEventListener[] = [];
  let ended = false;
  return {
    subscribe(listener) {
      if (!ended) listeners.push(listener);
      return () => {
        listeners = listeners.filter((candidate) => candidate !== listener);
      };
    },
    emit(event) {
      if (ended) return;
      if (isEndEvent(event)) ended = true;
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          onListenerError(error);
        }
      }
      if (ended) listeners = [];
    },
  };
}
