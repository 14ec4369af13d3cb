// The contract between the run loop (src/runs/) and the tools (src/tools/): what a run offers the
// model as functions and what a function is given when it is called. Both sides import this module
// and neither imports the other; app.ts hands the run engine the tool provider.

/** One function offered to the model. */
export interface ToolFunction {
  /** Function name the model sees: [a-z0-9_], at most 64 chars, unique within the run. */
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /** The tool record this function comes from (for steps). */
  toolId: string;
  toolName: string;
  /** An MCP tool's function: the server's name of the tool (what the tool's allow-list names). */
  mcpTool?: string;
  /** Runs the call; throws an Error whose message is safe to show (no secrets) on failure. */
  call(args: unknown, context: ToolCallContext): Promise<string>;
}

/** The run a call belongs to. */
export interface ToolCallContext {
  signal: AbortSignal;
  /** ms since epoch when the whole run tree must end */
  deadline: number;
  runId: string;
  userId: string;
  depth: number;
  /**
   * Runs another of the user's agents as a child of this run (bounded depth, no cycles): answers
   * its output, or throws an Error whose message is safe to give the model.
   */
  runChild(agentId: string, input: string): Promise<string>;
}

/** The functions of one run, and a warning for each tool (or part of one) left out. */
export interface ToolSet {
  tools: ToolFunction[];
  warnings: string[];
  /** What the model is told about tools it was meant to have and does not (a server that could not be reached). */
  notes?: string[];
  /** Ends what the tools hold open for the run (an MCP server's connection); called once the run ended. */
  release?(): Promise<void>;
}

/** Gives a run its tools: called once per run, with the context its calls will get. */
export type ToolProvider = (agent: { id: string }, caller: { id: string }, context: ToolCallContext) => Promise<ToolSet>;
