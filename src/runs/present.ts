// A run as the API shows it: GET /runs/{id} (and a webhook's `data`), the lists, the `done` event of a finished run's log.
import type { RunListItemShape, RunShape } from './schema.js';
import type { RunResult } from './run.js';
import type { RunListRow, RunRow } from './store.js';

export function presentRun(run: RunRow): RunShape {
  return {
    id: run.id,
    agentId: run.agentId,
    parentRunId: run.parentRunId,
    sessionId: run.sessionId,
    status: run.status,
    background: run.background,
    input: run.input,
    output: run.output,
    error: run.error,
    model: run.model,
    steps: run.steps,
    sources: run.sources,
    warnings: run.warnings,
    usage: run.usage,
    actions: run.status === 'requires_action' ? run.actions : [],
    startedAt: run.startedAt,
    // A waiting run's record keeps when it began to wait there; it has not finished.
    finishedAt: run.status === 'requires_action' ? null : run.finishedAt,
    ms: run.ms,
  };
}

/** A run in a list: cut as the store read it (see RunListItemSchema). */
export function presentRunListItem(run: RunListRow): RunListItemShape {
  return Object.assign(presentRun(run), { truncated: run.truncated });
}

/** A succeeded run as invoke answers it (and its log's `done` event carries it). */
export function presentRunResult(run: RunRow): RunResult {
  return {
    runId: run.id,
    sessionId: run.sessionId,
    output: run.output ?? '',
    model: run.model,
    steps: run.steps,
    sources: run.sources,
    warnings: run.warnings,
    usage: run.usage,
    ms: run.ms ?? 0,
  };
}
