// What a run offers the model as tools. The run loop only knows these shapes; which tools an agent
// has and how each one calls out is decided by a tool provider plugged into the run engine.

/** One function offered to the model. */
export interface RunTool {
  /** Function name the model sees: [a-z0-9_], at most 64 chars, unique within the run. */
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /** The tool record this function comes from (for steps). */
  toolId: string;
  toolName: string;
  /** Runs the call; throws an Error whose message is safe to show (no secrets) on failure. */
  call(args: unknown, context: ToolCallContext): Promise<string>;
}

export interface ToolCallContext {
  signal: AbortSignal;
  /** ms since epoch when the whole run tree must end */
  deadline: number;
  runId: string;
  userId: string;
  depth: number;
}

export interface RunToolSet {
  tools: RunTool[];
  warnings: string[];
}
