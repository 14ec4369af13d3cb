// The JSON shapes of a run: as GET /runs/{id} shows it (and a webhook's `data`), and as a list holds it.
import type { RunListItemShape, RunShape } from './schema.js';
import type { RunListRow, RunRow } from './store.js';

export function presentRun(run: RunRow): RunShape {
  return {
    id: run.id,
    agentId: run.agentId,
    parentRunId: run.parentRunId,
    sessionId: run.sessionId,
    status: run.status,
    input: run.input,
    output: run.output,
    error: run.error,
    model: run.model,
    steps: run.steps,
    sources: run.sources,
    warnings: run.warnings,
    usage: run.usage,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    ms: run.ms,
  };
}

/** A run in a list: cut as the store read it (see RunListItemSchema). */
export function presentRunListItem(run: RunListRow): RunListItemShape {
  return Object.assign(presentRun(run), { truncated: run.truncated });
}
