// What the caller's MCP server offers: one tool per agent of the caller, named from the agent's
// name, and `search_documents`. A call of an agent's tool is an ordinary run through the run
// engine (prepared and executed as invoke does, recorded the same way); a run that cannot start
// or fails is a tool result with `isError` and the reason in words, never a protocol error.
import * as v from 'valibot';
import type { Tool } from '@modelcontextprotocol/server';
import type { AgentStore, ToolAgentRow } from '../agents/store.js';
import type { SearchStore } from '../documents/search-store.js';
import { presentHit, searchWords } from '../documents/search.js';
import type { RunEngine } from '../runs/engine.js';
import { RunFailure } from '../runs/failures.js';
import { InputSchema, SessionIdSchema } from '../runs/schema.js';

/** Longest tool name made from an agent's name, before a `_2`, `_3` … suffix. */
export const MAX_AGENT_TOOL_NAME = 48;
export const SEARCH_TOOL = 'search_documents';
const SEARCH_DEFAULT_LIMIT = 20;
const SEARCH_MAX_LIMIT = 100;
/** Agents' tools in one page of `tools/list`; a caller with more gets `nextCursor`, which MCP clients follow. */
export const MCP_PAGE_SIZE = 100;

/** A listed tool, as the SDK types it (its input a JSON Schema). */
export type McpToolShape = Tool;

/** What a call answers: the text for the model, the structured result, and whether it failed. */
export interface McpToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** An agent's name as a tool name: lower case, each run of other characters one `_`, none at either end, at most 48 characters. */
export function agentToolBase(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_AGENT_TOOL_NAME)
    .replace(/_+$/, '');
  return base === '' ? 'agent' : base;
}

/** The caller's agents with their tool names, oldest first: a later agent whose name gives a taken name gets `_2`, `_3` …. */
export function namedAgents(agents: ToolAgentRow[]): { name: string; agent: ToolAgentRow }[] {
  const taken = new Set([SEARCH_TOOL]);
  return agents.map((agent) => {
    const base = agentToolBase(agent.name);
    let name = base;
    for (let n = 2; taken.has(name); n += 1) name = `${base}_${n}`;
    taken.add(name);
    return { name, agent };
  });
}

/**
 * The prompt's variables a call must give: all but `{input}`, which the input fills (as for
 * invoke). A `{sessionId}` is filled by the `sessionId` argument, which it makes required.
 */
const variablesOf = (agent: ToolAgentRow) => agent.variables.filter((name) => name !== 'input');

function agentTool(name: string, agent: ToolAgentRow): McpToolShape {
  const variables = variablesOf(agent);
  const session = 'Continues this memory session (an agent with memory starts a new one without it)';
  // Built from entries: a variable may be named `__proto__`, which an assignment would not add.
  const properties = Object.fromEntries([
    ['input', { type: 'string', description: 'The message for the agent.' }],
    [
      'sessionId',
      {
        type: 'string',
        description: variables.includes('sessionId') ? `${session}; also the value of {sessionId} in the agent's prompt.` : `${session}.`,
      },
    ],
    ...variables
      .filter((variable) => variable !== 'sessionId')
      .map((variable) => [variable, { type: 'string', description: `The value of {${variable}} in the agent's prompt.` }]),
  ]);
  return {
    name,
    description: agent.description || `Runs the agent "${agent.name}" and answers with its reply.`,
    inputSchema: { type: 'object', properties, required: ['input', ...variables] },
  };
}

const SEARCH_TOOL_SHAPE: McpToolShape = {
  name: SEARCH_TOOL,
  description:
    "Full-text search over the caller's ready documents. Every word of the query must match (in any of its forms); the best-ranked passages come first.",
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The words to find.' },
      limit: { type: 'integer', minimum: 1, maximum: SEARCH_MAX_LIMIT, description: `How many hits (default ${SEARCH_DEFAULT_LIMIT}).` },
    },
    required: ['query'],
  },
};

const SearchArguments = v.object({
  query: v.pipe(v.string('must be a string'), v.maxLength(1000, 'must be at most 1000 characters')),
  limit: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be an integer'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(SEARCH_MAX_LIMIT, `must be at most ${SEARCH_MAX_LIMIT}`),
    ),
    SEARCH_DEFAULT_LIMIT,
  ),
});

const text = (words: string) => [{ type: 'text' as const, text: words }];
const failed = (words: string): McpToolResult => ({ content: text(words), isError: true });

/** The problems of `args` against `schema` in words ("input: must be a string"), or the parsed value. */
function read<S extends v.GenericSchema>(schema: S, args: unknown): { ok: true; value: v.InferOutput<S> } | { ok: false; words: string } {
  const result = v.safeParse(schema, args ?? {}, { abortPipeEarly: true });
  if (result.success) return { ok: true, value: result.output };
  const words = result.issues.map((issue) => `${v.getDotPath(issue) ?? 'arguments'}: ${issue.message}`).join('; ');
  return { ok: false, words: `Invalid arguments: ${words}.` };
}

export interface McpToolsDeps {
  agents: AgentStore;
  search: SearchStore;
  engine: RunEngine;
}

/** A page's cursor: the id of the last agent it listed (opaque to clients). */
const cursorAfter = (agentId: string) => Buffer.from(`after:${agentId}`).toString('base64url');
const agentIdOf = (cursor: string) => {
  const text = Buffer.from(cursor.slice(0, 200), 'base64url').toString('utf8');
  return text.startsWith('after:') ? text.slice('after:'.length) : undefined;
};

/** The tools of one caller, read when asked: the list follows the caller's agents as they change. */
export function createMcpTools({ agents, search, engine }: McpToolsDeps) {
  /**
   * One page of the caller's tools: MCP_PAGE_SIZE agents from the start or after `cursor`'s agent,
   * search_documents after the first page's (a host that reads only the first page still has it).
   * Undefined for a cursor this server did not give, or whose agent has been deleted since (the
   * client lists again from the start).
   */
  function list(userId: string, cursor?: string): { tools: McpToolShape[]; nextCursor?: string } | undefined {
    const named = namedAgents(agents.listAsTools(userId));
    let start = 0;
    if (cursor !== undefined) {
      const after = agentIdOf(cursor);
      const index = after === undefined ? -1 : named.findIndex((entry) => entry.agent.id === after);
      if (index === -1) return undefined;
      start = index + 1;
    }
    const page = named.slice(start, start + MCP_PAGE_SIZE);
    const tools = page.map(({ name, agent }) => agentTool(name, agent));
    if (start === 0) tools.push(SEARCH_TOOL_SHAPE);
    if (start + MCP_PAGE_SIZE >= named.length) return { tools };
    return { tools, nextCursor: cursorAfter(page[page.length - 1].agent.id) };
  }

  function searchDocuments(userId: string, args: unknown): McpToolResult {
    const parsed = read(SearchArguments, args);
    if (!parsed.ok) return failed(parsed.words);
    const words = searchWords(parsed.value.query, 'all');
    if (words === undefined) return failed('Invalid arguments: query: must hold at least one word.');
    const found = search.find({ userId }, words, { match: 'all', limit: parsed.value.limit, snippet: { words: 24, marked: true } });
    const hits = found.map(presentHit);
    const listing = found.map(
      (hit, index) => `[${index + 1}] ${hit.documentName}, part ${hit.position + 1}: ${hit.rawSnippet.replace(/[\u0001\u0002]/g, '')}`,
    );
    return { content: text(listing.length === 0 ? 'No documents match.' : listing.join('\n')), structuredContent: { hits } };
  }

  async function runAgent(userId: string, agent: ToolAgentRow, args: unknown, signal: AbortSignal): Promise<McpToolResult> {
    const parsed = read(v.looseObject({ input: InputSchema, sessionId: v.optional(SessionIdSchema) }), args);
    if (!parsed.ok) return failed(parsed.words);
    // The variables are read as own keys of the arguments (a variable may be named `__proto__`).
    const given = args as Record<string, unknown>;
    const variables = variablesOf(agent);
    const missing = variables.filter((name) => !Object.hasOwn(given, name) || typeof given[name] !== 'string');
    if (missing.length > 0) return failed(`Invalid arguments: ${missing.map((name) => `${name}: must be a string`).join('; ')}.`);
    const request = {
      input: parsed.value.input,
      // {sessionId} is the session's id as the run uses it (trimmed, as the argument is read).
      variables: Object.fromEntries(
        variables.map((name) => [name, name === 'sessionId' ? parsed.value.sessionId! : (given[name] as string)]),
      ),
      sessionId: parsed.value.sessionId ?? null,
      stream: false,
    };
    let prepared;
    try {
      prepared = await engine.prepare(userId, agent.id, request);
    } catch (error) {
      if (error instanceof RunFailure) return failed(`The agent could not run: ${error.message}`);
      throw error;
    }
    const outcome = await engine.execute(prepared, { cancel: signal });
    if (!outcome.ok)
      return {
        ...failed(`The run failed: ${outcome.failure.message}`),
        structuredContent: { runId: outcome.runId, error: outcome.failure.message },
      };
    const { runId, sessionId, output, sources } = outcome.result;
    return { content: text(output), structuredContent: { runId, sessionId, output, sources } };
  }

  /** Answers a `tools/call`; undefined when the caller has no tool of that name. */
  async function call(userId: string, name: string, args: unknown, signal: AbortSignal): Promise<McpToolResult | undefined> {
    if (name === SEARCH_TOOL) return searchDocuments(userId, args);
    const found = namedAgents(agents.listAsTools(userId)).find((entry) => entry.name === name);
    if (!found) return undefined;
    return runAgent(userId, found.agent, args, signal);
  }

  return { list, call };
}

export type McpTools = ReturnType<typeof createMcpTools>;
