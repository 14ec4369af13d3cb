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
  /** The call waits for a person's approval before it is made (the agent-tool link says so). */
  requiresApproval?: boolean;
  /** An MCP tool's function: the server's name of the tool (what the tool's allow-list names). */
  mcpTool?: string;
  /**
   * Runs the call; throws an Error whose message is safe to show (no secrets) on failure, or a
   * ToolCallWaits when the work it started waits for approval.
   */
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

/**
 * Thrown by a call whose work waits for a person's approval: a nested agent run (the AGENT tool)
 * that paused. Not a failure: the calling run pauses with the nested run's waiting calls.
 */
export class ToolCallWaits extends Error {
  constructor(
    /** The nested run that waits, and its agent. */
    readonly runId: string,
    readonly agentId: string,
    /** Its waiting calls, as it lists them (`{ id, tool, function, input, runId?, agentId? }`). */
    readonly actions: { id: string; tool: string; function: string; input: unknown; runId?: string; agentId?: string }[],
  ) {
    super('a nested run waits for approval');
    this.name = 'ToolCallWaits';
  }
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
