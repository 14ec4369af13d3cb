// The tool set of one run: every tool linked to the agent, turned into the functions the model is
// offered (named uniquely), or left out with a warning that says why. Every function's output
// and error pass through one wrapper that removes the tool's secrets (its metadata headers), so
// a server that echoes a key back cannot put it into a step, an event or a log line.
import type { RunTool, RunToolSet, ToolCallContext } from '../../runs/tool-types.js';
import { agentTool, type RunChildAgent } from './agent-tool.js';
import { redactSecrets, ToolError, type FetchLike, type MetadataResult } from './http-call.js';
import { createFunctionNamer } from './naming.js';
import { openApiTools } from './openapi.js';
import { PLAIN_HTTP_TYPES, plainHttpTool, searchTool, type ToolRecord } from './web-tools.js';

export interface ToolProviderDeps {
  /** The SSRF-guarded, fetch-compatible fetcher every tool request goes through. */
  fetch: FetchLike;
  /** How long one tool request may take (default 30 s; never past the run's deadline). */
  toolTimeoutMs?: number;
  /** The user's agent with this id (name for messages), or undefined. */
  findAgent: (userId: string, agentId: string) => { id: string; name: string } | undefined;
  /** Runs an agent as a nested run (the run engine's, which bounds depth and refuses cycles). */
  runChild: RunChildAgent;
}

export interface ToolSetRequest {
  userId: string;
  /** The agent's tool records, metadata unsealed, in link order. */
  tools: ToolRecord[];
  signal: AbortSignal;
  deadline: number;
}

/** Every string value in a tool's metadata headers (and keys): what must never be shown. */
export function secretsOf(tool: ToolRecord): string[] {
  const secrets: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === 'string' || typeof value === 'number') secrets.push(String(value));
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(collect);
  };
  collect(tool.metadata.headers);
  for (const [key, value] of Object.entries(tool.metadata)) {
    if (/key|token|secret|password|authorization/i.test(key)) collect(value);
  }
  return secrets;
}

/** `tool` with its output and errors scrubbed of `secrets`; an unexpected error becomes a plain message. */
function guarded(tool: RunTool, secrets: string[]): RunTool {
  return {
    ...tool,
    async call(args, context) {
      try {
        return redactSecrets(await tool.call(args, context), secrets);
      } catch (error) {
        if (context.signal.aborted) throw error;
        const message = error instanceof Error && error.message ? error.message : 'the tool failed';
        throw new ToolError(redactSecrets(message, secrets));
      }
    },
  };
}

/** The functions the agent's tools stand for, and a warning for each tool (or operation) left out. */
export async function buildToolSet(deps: ToolProviderDeps, request: ToolSetRequest): Promise<RunToolSet> {
  const namer = createFunctionNamer();
  const tools: RunTool[] = [];
  const warnings: string[] = [];
  for (const record of request.tools) {
    const secrets = secretsOf(record);
    const http = { fetch: deps.fetch, timeoutMs: deps.toolTimeoutMs, secrets };
    const notOffered = (reason: string) => warnings.push(redactSecrets(`tool "${record.name}" (${record.type}) is not offered: ${reason}`, secrets));
    let result: MetadataResult<RunTool[]>;
    if (record.type === 'OPENAPI') {
      const loaded = await openApiTools(record, namer, http, request.signal, request.deadline);
      if (loaded.ok) {
        warnings.push(...loaded.value.warnings.map((warning) => redactSecrets(warning, secrets)));
        result = { ok: true, value: loaded.value.tools };
      } else result = loaded;
    } else {
      // Named only once offered, so a tool left out does not take a name from the next one.
      let single: MetadataResult<RunTool>;
      if (record.type === 'SEARCH') single = searchTool(record, '', http);
      else if ((PLAIN_HTTP_TYPES as readonly string[]).includes(record.type)) single = plainHttpTool(record, '', http);
      else if (record.type === 'AGENT') {
        single = agentTool(record, '', {
          findAgent: (id) => deps.findAgent(request.userId, id),
          runChild: deps.runChild,
        });
      } else single = { ok: false, reason: `the type ${record.type} is not one this service can run` };
      result = single.ok ? { ok: true, value: [{ ...single.value, name: namer(record.name) }] } : single;
    }
    if (result.ok) tools.push(...result.value.map((tool) => guarded(tool, secrets)));
    else notOffered(result.reason);
  }
  return { tools, warnings };
}

/** What the run engine's tool provider seam calls: the tool set of `agent` for one run. */
export type AgentToolProvider = (agent: { id: string }, caller: { id: string }, context: ToolCallContext) => Promise<RunToolSet>;

/** The provider the run engine is given: reads the agent's linked tools (metadata unsealed) and builds their functions. */
export function createToolProvider(options: {
  listToolsForRun: (userId: string, agentId: string) => ToolRecord[];
  findAgent: ToolProviderDeps['findAgent'];
  fetch: FetchLike;
  toolTimeoutMs?: number;
  runChild: RunChildAgent;
}): AgentToolProvider {
  const deps: ToolProviderDeps = { fetch: options.fetch, toolTimeoutMs: options.toolTimeoutMs, findAgent: options.findAgent, runChild: options.runChild };
  return (agent, caller, context) =>
    buildToolSet(deps, {
      userId: caller.id,
      tools: options.listToolsForRun(caller.id, agent.id),
      signal: context.signal,
      deadline: context.deadline,
    });
}
