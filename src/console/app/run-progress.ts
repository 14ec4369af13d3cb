// What a run's events have said so far, as the chat and the run page draw it: the answer as its
// tokens arrive, the tool steps with their results, the sources, and the warnings of its answer.
// The end events (`done`'s answer aside) are the caller's: each shows an end in its own way.
import type { Source } from './api.js';

export interface StepView {
  id: string;
  tool: string;
  function?: string;
  input: unknown;
  output?: unknown;
  error?: unknown;
}

export interface RunProgress {
  answer: string;
  steps: StepView[];
  sources: Source[];
  warnings: string[];
}

export const NO_PROGRESS: RunProgress = { answer: '', steps: [], sources: [], warnings: [] };

/** The events that end a stream of a run's events: nothing follows them in that stream. */
export const END_EVENTS = new Set(['done', 'error', 'requires_action']);

/** `progress` with one more of the run's events (`data` parsed); events it does not draw leave it as it was. */
export function withEvent<T extends RunProgress>(progress: T, name: string, data: any): T {
  switch (name) {
    case 'token':
      return { ...progress, answer: progress.answer + String(data?.text ?? '') };
    case 'tool_call':
      return {
        ...progress,
        steps: [...progress.steps, { id: data.id, tool: data.tool, function: data.function, input: data.input }],
      };
    case 'tool_result':
      return {
        ...progress,
        steps: progress.steps.map((step) => (step.id === data.id ? { ...step, output: data.output, error: data.error } : step)),
      };
    case 'sources':
      return { ...progress, sources: Array.isArray(data) ? data : progress.sources };
    case 'done':
      return {
        ...progress,
        answer: data?.output ?? progress.answer,
        sources: data?.sources ?? progress.sources,
        warnings: data?.warnings ?? [],
      };
    default:
      return progress;
  }
}
