// The tool set of one run: every tool linked to the agent, turned by its kind into the functions
// the model is offered (named uniquely), or left out with a warning that says why. Every function's
// output and error pass through one wrapper that removes the tool's secrets, so a server that
// echoes a key back cannot put it into a step, an event or a log line.
import { ToolCallWaits, type ToolCallContext, type ToolFunction, type ToolProvider, type ToolSet } from '../../lib/tool-contract.js';
import { kindOf } from '../kinds/index.js';
import type { Built, ToolKind, ToolRecord } from '../kinds/kind.js';
import { redactSecrets, TOOL_TIMEOUT_MS, ToolError, type FetchLike, type FetchSessionLike } from './http-call.js';
import type { Keeper } from './keeper.js';
import { createFunctionNamer } from './naming.js';

export interface ToolProviderDeps {
  /** The SSRF-guarded, fetch-compatible fetcher every tool request goes through. */
  fetch: FetchLike;
  /** A session of that fetcher: its connections kept alive until closed (see ToolHttp). */
  session?: (limits: { maxResponseBytes: number }) => FetchSessionLike;
  /** How long one tool request may take (default 30 s; never past the run's deadline). */
  toolTimeoutMs?: number;
  /** What tools keep for the next run (see ToolHttp). */
  keeper?: Keeper;
  /** The user's agent with this id (name for messages), or undefined. */
  findAgent: (userId: string, agentId: string) => { id: string; name: string } | undefined;
}

export interface ToolSetRequest {
  userId: string;
  /** The agent's tool records, metadata unsealed, in link order. */
  tools: ToolRecord[];
  signal: AbortSignal;
  deadline: number;
}

/** Metadata keys any kind's clients may put a credential under (`automation_nla_api_key`, `token`, …). */
export const SECRET_KEY = /key|token|secret|password|authorization/i;

/** Every string value of the kind's secret fields, and of any key named like a credential: what must never be shown. */
export function secretsOf(tool: ToolRecord, kind: Pick<ToolKind, 'secretFields'> | undefined): string[] {
  const secrets: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === 'string' || typeof value === 'number') secrets.push(String(value));
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(collect);
  };
  for (const field of kind?.secretFields ?? []) collect(tool.metadata[field]);
  for (const [key, value] of Object.entries(tool.metadata)) {
    if (SECRET_KEY.test(key)) collect(value);
  }
  return secrets;
}

/**
 * `fn` with its output and errors scrubbed of `secrets` (an unexpected error becomes a plain
 * message), marked as its link asks (`requiresApproval`).
 */
function guarded(fn: ToolFunction, secrets: string[], requiresApproval: boolean): ToolFunction {
  return {
    ...fn,
    requiresApproval,
    async call(args, context) {
      try {
        return redactSecrets(await fn.call(args, context), secrets);
      } catch (error) {
        if (context.signal.aborted || error instanceof ToolCallWaits) throw error;
        const message = error instanceof Error && error.message ? error.message : 'the tool failed';
        throw new ToolError(redactSecrets(message, secrets));
      }
    },
  };
}

/**
 * The functions the agent's tools stand for, and a warning for each tool (or operation) left out.
 * The tools are built at once (an MCP server that does not answer holds up the run one tool
 * timeout, not one per such server); their functions are then named in the order the tools are
 * linked, unique within the run.
 */
export async function buildToolSet(deps: ToolProviderDeps, request: ToolSetRequest): Promise<ToolSet> {
  const builds = request.tools.map(async (record) => {
    const kind = kindOf(record.type);
    const secrets = secretsOf(record, kind);
    const built: Built = kind
      ? await kind.build({
          tool: record,
          http: { fetch: deps.fetch, session: deps.session, timeoutMs: deps.toolTimeoutMs, secrets, keeper: deps.keeper },
          signal: request.signal,
          deadline: request.deadline,
          findAgent: (agentId) => deps.findAgent(request.userId, agentId),
          // Unique within the tool here; within the run below.
          name: createFunctionNamer(),
        })
      : { ok: false, reason: `the type ${record.type} is not one this service can run` };
    return { record, secrets, built };
  });
  const settled = await Promise.allSettled(builds);
  const name = createFunctionNamer();
  const tools: ToolFunction[] = [];
  const warnings: string[] = [];
  const notes: string[] = [];
  const closes: (() => Promise<void>)[] = [];
  for (const outcome of settled) {
    const close = outcome.status === 'fulfilled' && outcome.value.built.ok ? outcome.value.built.value.close : undefined;
    if (close) closes.push(close);
  }
  const release = async () => {
    await Promise.all(closes.map((close) => close()));
  };
  // A build that threw (the run's signal aborted it): every tool built is closed again.
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) {
    await release();
    throw failed.reason;
  }
  for (const outcome of settled as PromiseFulfilledResult<Awaited<(typeof builds)[number]>>[]) {
    const { record, secrets, built } = outcome.value;
    if (built.ok) {
      tools.push(
        ...built.value.functions.map((fn) => guarded({ ...fn, name: name(fn.name, true) }, secrets, record.requiresApproval ?? false)),
      );
      warnings.push(...built.value.warnings.map((warning) => redactSecrets(warning, secrets)));
    } else {
      const said = redactSecrets(`tool "${record.name}" (${record.type}) is not offered: ${built.reason}`, secrets);
      warnings.push(said);
      if (built.unavailable) notes.push(`The ${said}.`);
    }
  }
  return { tools, warnings, notes, release };
}

/** How long after its deadline the build of toolFunctions is aborted, if a kind has not given up by itself. */
const TOOL_FUNCTIONS_ABORT_MARGIN_MS = 1000;

/**
 * What one tool offers the model right now, as a run starting now would get it (an MCP server is
 * asked): its functions and warnings. Bounded by the tool timeout; the connection is closed after.
 */
export async function toolFunctions(deps: ToolProviderDeps, userId: string, record: ToolRecord): Promise<ToolSet> {
  const timeoutMs = deps.toolTimeoutMs ?? TOOL_TIMEOUT_MS;
  const set = await buildToolSet(deps, {
    userId,
    tools: [record],
    // The deadline bounds the requests; a kind whose server missed it answers a warning. The signal
    // only backs it up: aborted at the deadline itself, it would often come first, and a server that
    // never answers would be an error of the route instead of a warning.
    signal: AbortSignal.timeout(timeoutMs + TOOL_FUNCTIONS_ABORT_MARGIN_MS),
    deadline: Date.now() + timeoutMs,
  });
  await set.release?.();
  return set;
}

/** The provider app.ts gives the run engine: reads the agent's linked tools (metadata unsealed) and builds their functions. */
export function createToolProvider(
  options: ToolProviderDeps & { listToolsForRun: (userId: string, agentId: string) => ToolRecord[] },
): ToolProvider {
  return (agent, caller, context: ToolCallContext) =>
    buildToolSet(options, {
      userId: caller.id,
      tools: options.listToolsForRun(caller.id, agent.id),
      signal: context.signal,
      deadline: context.deadline,
    });
}
