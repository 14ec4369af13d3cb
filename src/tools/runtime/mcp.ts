// MCP tools: a Streamable HTTP MCP server (metadata.url, with metadata.headers on each request),
// reached through the official client. When a run starts the server's tools are listed and each
// (or each of the allow-list, metadata.tools) becomes a function `<tool name>__<mcp tool name>`.
// The connected client is kept for the next run of the same tool and server (the keeper of
// ToolHttp: 4 s idle, a minute at most): such a run only lists and calls, on the kept-alive
// connection, in the same session with a server of the 2025 versions; without a keeper, each run
// connects its own. Every request the client's transport makes goes through a guarded session (its
// host vetted when the client connects, the SSRF check on each connection), redirects are refused,
// and what the server sends is bounded: its answers in bytes, the list in tools and in schema size.
// A server that is down, slow (TOOL_TIMEOUT_MS) or answers an error is the tool's error, told to
// the model. What the server says may echo the tool's headers: their values are redacted from what
// it lists, and from its errors before they are cut.
import { createHash } from 'node:crypto';
import type { Client, jsonSchemaValidator, PriorDiscovery, Tool } from '@modelcontextprotocol/client';
import type { ToolFunction } from '../../lib/tool-contract.js';
import { packageVersion } from '../../lib/version.js';
import type { Built, ToolRecord } from '../kinds/kind.js';
import type { Held } from './keeper.js';
import { cutRedacted, redactSecrets, targetFromMetadata, TOOL_TIMEOUT_MS, ToolError, type FetchLike, type ToolHttp } from './http-call.js';
import { functionNameOf, MAX_FUNCTION_NAME } from './naming.js';

/** Tools of one server offered to a run; more are left out with a warning. */
export const MAX_MCP_TOOLS = 64;
/**
 * The official client, loaded when an MCP tool is first built: its module (and the schemas it
 * makes when loaded) costs a few MiB of memory that a service whose agents use no MCP server never
 * spends.
 */
let client: Promise<typeof import('@modelcontextprotocol/client')> | undefined;
const loadClient = () =>
  (client ??= import('@modelcontextprotocol/client').catch((error: unknown) => {
    client = undefined;
    throw error;
  }));

/**
 * The client's checker of a call's structured content against the tool's output schema: it accepts
 * everything. The service hands the model what the server answered and needs it in no shape; and
 * the client's own checker compiles the server's schema and runs its patterns on the server's text
 * synchronously, where one pattern that backtracks (`^(a+)+$`) held up the whole service for minutes.
 */
const acceptEveryOutput: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** Largest answer of the server to one request (a tool list, a call's result). */
export const MCP_RESPONSE_MAX_BYTES = 1024 * 1024;
/** Largest input schema of one tool (JSON characters): it is sent to the model with every step. */
export const MCP_SCHEMA_MAX_CHARS = 16 * 1024;
const DESCRIPTION_MAX_CHARS = 1024;
/** Pages of a tool list read at most (each at most MCP_RESPONSE_MAX_BYTES). */
const MAX_LIST_PAGES = 4;

/** The function name of one MCP tool: `<tool name>__<mcp tool name>`, each part as a function name, cut to 64. */
export const mcpFunctionName = (toolName: string, mcpToolName: string) =>
  `${functionNameOf(toolName)}__${functionNameOf(mcpToolName)}`.slice(0, MAX_FUNCTION_NAME).replace(/_+$/, '');

const tooLarge = (host: string, maxBytes: number) => new ToolError(`${host} sent an answer larger than ${maxBytes / 1024} KiB`);

/**
 * The service's fetch for the MCP client: no redirects followed, answers cut off past `maxBytes`
 * (`capped`: `fetch` cuts them off itself, as the guarded session does, more cheaply than a web stream here).
 */
export function boundedFetch(fetch: FetchLike, maxBytes = MCP_RESPONSE_MAX_BYTES, capped = false): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, { ...init, redirect: 'manual' });
    const host = () => new URL(String(url)).host;
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      throw new ToolError(`${host()} answered HTTP ${response.status} (a redirect, which tools do not follow)`);
    }
    if (capped || !response.body) return response;
    let seen = 0;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(tooLarge(host(), maxBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** `text` of the server's, with `secrets` redacted and then cut to `maxChars` (no beginning of a secret left at the cut). */
const shownOf = (text: string, secrets: readonly string[], maxChars: number) =>
  cutRedacted(redactSecrets(text, secrets), secrets, (redacted) => redacted.slice(0, maxChars));

/** Words for what went wrong with a server, without a header or a key: `secrets` are redacted before the message is cut. */
function describe(error: unknown, host: string, timeoutMs: number, secrets: readonly string[]): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ToolError) return cause.message;
    if (cause.name === 'IngestError')
      return (cause as { code?: unknown }).code === 'too_large' ? tooLarge(host, MCP_RESPONSE_MAX_BYTES).message : cause.message;
    if ((cause as { code?: unknown }).code === 'REQUEST_TIMEOUT')
      return `${host} did not answer within ${Math.round(timeoutMs / 100) / 10} s`;
  }
  // Redacted before its white space is folded (a secret may hold some), then cut.
  const message = redactSecrets(error instanceof Error ? error.message : String(error), secrets).replace(/\s+/g, ' ');
  return `${host}: ${cutRedacted(message, secrets, (text) => text.slice(0, 300))}`;
}

/**
 * The text a model reads of a call's result: its text parts, the structured content as JSON, other
 * parts named (`secrets` redacted from a name before it is cut).
 */
export function resultText(result: { content?: unknown; structuredContent?: unknown }, secrets: readonly string[] = []): string {
  const parts: string[] = [];
  for (const part of Array.isArray(result.content) ? result.content : []) {
    const block = (typeof part === 'object' && part !== null ? part : {}) as { type?: unknown; text?: unknown };
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else parts.push(`[${typeof block.type === 'string' ? shownOf(block.type, secrets, 40) : 'unknown'} content left out]`);
  }
  if (result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

/**
 * What servers said of themselves when a run connected (the answer to `server/discover`, or that
 * they speak only the 2025 versions), remembered for DISCOVERY_TTL_MS per URL and headers, so
 * that the runs after it connect without asking again: one request fewer a run. The tool list is
 * asked every run. A server that no longer answers as remembered is asked again at once.
 */
export const DISCOVERY_TTL_MS = 60_000;
const MAX_DISCOVERIES = 1000;

const discoveryKey = (url: URL, headers: Record<string, string>) =>
  createHash('sha256')
    .update(JSON.stringify([url.href, headers]))
    .digest('base64url');

const discoveries = (() => {
  const known = new Map<string, { prior: PriorDiscovery; until: number }>();
  return {
    recall(key: string): PriorDiscovery | undefined {
      const entry = known.get(key);
      if (entry && entry.until > Date.now()) return entry.prior;
      known.delete(key);
      return undefined;
    },
    remember(key: string, client: Client) {
      const discover = client.getDiscoverResult();
      const prior: PriorDiscovery | undefined = discover
        ? { kind: 'modern', discover }
        : client.getProtocolEra() === 'legacy'
          ? { kind: 'legacy' }
          : undefined;
      if (!prior) return;
      known.delete(key);
      known.set(key, { prior, until: Date.now() + DISCOVERY_TTL_MS });
      // The oldest first: a Map keeps the order things were set in.
      if (known.size > MAX_DISCOVERIES) known.delete(known.keys().next().value!);
    },
    forget(key: string) {
      known.delete(key);
    },
  };
})();

/** A client no keeper keeps: closed when the run gives it back. */
const ownHold = (client: Client, close: () => Promise<void>): Held<Client> => ({
  value: client,
  release: () => void close(),
  discard() {},
});

/** The server answered, but not as was remembered of it: not a network failure, a refusal of the guard or a timeout. */
function answeredOtherwise(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ToolError || cause.name === 'IngestError') return false;
    if ((cause as { code?: unknown }).code === 'REQUEST_TIMEOUT') return false;
  }
  return true;
}

/** The allow-list of metadata.tools, or null for every tool. */
export function allowListOf(metadata: Record<string, unknown>): string[] | null {
  const tools = metadata.tools;
  return Array.isArray(tools) ? tools.filter((name): name is string => typeof name === 'string') : null;
}

/**
 * The server's tools: the client's own listing (every page, at most MAX_LIST_PAGES, which it keeps
 * for its calls: their output schemas, the headers their arguments are mirrored in); or, from a
 * server with more pages, those of the first MAX_LIST_PAGES read page by page (`cut`).
 */
async function listServerTools(
  client: Client,
  options: () => { signal: AbortSignal; timeout: number },
): Promise<{ tools: Tool[]; cut: boolean }> {
  try {
    return { tools: (await client.listTools(undefined, options())).tools, cut: false };
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'LIST_PAGINATION_EXCEEDED') throw error;
  }
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
    const answer =
      cursor === undefined ? await client.request({ method: 'tools/list' }, options()) : await client.listTools({ cursor }, options());
    tools.push(...answer.tools);
    cursor = answer.nextCursor;
    if (cursor === undefined) break;
  }
  return { tools, cut: true };
}

/**
 * The functions of an MCP tool for one run: takes the client a run before kept for this tool and
 * server (or connects one), lists the server's tools, offers the allowed ones.
 */
export async function mcpTools(
  tool: ToolRecord,
  name: (text: string, asIs?: boolean) => string,
  http: ToolHttp,
  signal: AbortSignal,
  deadline: number,
): Promise<Built> {
  const target = targetFromMetadata(tool.metadata);
  if (!target.ok) return target;
  const { url, headers } = target.value;
  const toolTimeout = http.timeoutMs ?? TOOL_TIMEOUT_MS;
  const secrets = http.secrets ?? [];
  const timeout = () => Math.max(1, Math.min(toolTimeout, deadline - Date.now()));
  const options = () => ({ signal, timeout: timeout() });
  const key = discoveryKey(url, headers);
  // A client is kept for one tool (one user's) and the URL and headers it was opened with.
  const keptKey = `${tool.id} ${key}`;
  /** A client connected (as `prior` says, or by asking the server), held by this run; closed again if that fails. */
  const connect = async (prior: PriorDiscovery | undefined): Promise<Held<Client>> => {
    const { Client, StreamableHTTPClientTransport } = await loadClient();
    // The client's requests share kept-alive connections (one TCP and TLS handshake, not one a
    // request, nor one a run); its requests still under way end when it is closed.
    const session = http.session?.({ maxResponseBytes: MCP_RESPONSE_MAX_BYTES });
    const fetch = session ? boundedFetch(session.fetch, MCP_RESPONSE_MAX_BYTES, true) : boundedFetch(http.fetch);
    const client = new Client(
      { name: 'agent-service', version: packageVersion() },
      { versionNegotiation: { mode: 'auto' }, listMaxPages: MAX_LIST_PAGES, jsonSchemaValidator: acceptEveryOutput },
    );
    const transport = new StreamableHTTPClientTransport(url, {
      fetch,
      requestInit: { headers },
      redirectPolicy: 'same-origin',
    });
    const close = () =>
      client
        .close()
        .catch(() => {})
        .finally(() => session?.close());
    try {
      await client.connect(transport, { ...options(), ...(prior && { prior }) });
    } catch (error) {
      await close();
      throw error;
    }
    if (prior === undefined) discoveries.remember(key, client);
    return http.keeper ? http.keeper.keep(keptKey, client, close) : ownHold(client, close);
  };
  /** The server's tools, listed through `held`; a client that cannot list them is given up. */
  const listThrough = async (held: Held<Client>) => {
    try {
      return { held, ...(await listServerTools(held.value, options)) };
    } catch (error) {
      held.discard();
      held.release();
      throw error;
    }
  };
  let opened: Awaited<ReturnType<typeof listThrough>>;
  try {
    const kept = http.keeper?.take<Client>(keptKey);
    const prior = kept ? undefined : discoveries.recall(key);
    try {
      opened = await listThrough(kept ?? (await connect(prior)));
    } catch (error) {
      if ((!kept && prior === undefined) || signal.aborted || !answeredOtherwise(error)) throw error;
      // The server no longer answers as it did when it was last asked: it is asked again.
      discoveries.forget(key);
      opened = await listThrough(await connect(undefined));
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    return { ok: false, reason: `the MCP server is unavailable: ${describe(error, url.host, toolTimeout, secrets)}`, unavailable: true };
  }
  const { held, cut } = opened;
  const client = held.value;
  let listed = opened.tools;
  const close = async () => held.release();

  const warnings: string[] = [];
  if (cut)
    warnings.push(
      `tool "${tool.name}" (MCP): the server lists its tools in more than ${MAX_LIST_PAGES} pages; only those of the first ${MAX_LIST_PAGES} are offered`,
    );
  const allowList = allowListOf(tool.metadata);
  const allowed = allowList && new Set(allowList);
  if (allowed) listed = listed.filter((entry) => allowed.has(entry.name));
  if (listed.length > MAX_MCP_TOOLS) {
    warnings.push(
      `tool "${tool.name}" (MCP): the server lists more than ${MAX_MCP_TOOLS} tools; only the first ${MAX_MCP_TOOLS} are offered`,
    );
    listed = listed.slice(0, MAX_MCP_TOOLS);
  }
  const functions: ToolFunction[] = [];
  for (const entry of listed) {
    // A name is shown as it is (mcpTool, an allow-list) and called as it is: one holding a secret is left out.
    if (redactSecrets(entry.name, secrets) !== entry.name) {
      warnings.push(`tool "${tool.name}" (MCP): a tool whose name holds a secret of the tool is not offered`);
      continue;
    }
    const shownName = shownOf(entry.name, secrets, 64);
    // The secrets are redacted in the schema's JSON text (as JSON writes them inside a string, then
    // as they are, which may stand across a property and its value): in a property's name as in a value.
    const schema = redactSecrets(JSON.stringify(entry.inputSchema ?? { type: 'object' }), secrets);
    if (schema.length > MCP_SCHEMA_MAX_CHARS) {
      warnings.push(
        `tool "${tool.name}" (MCP): "${shownName}" is not offered: its input schema is larger than ${MCP_SCHEMA_MAX_CHARS / 1024} KiB`,
      );
      continue;
    }
    let parameters: Record<string, unknown>;
    try {
      parameters = JSON.parse(schema) as Record<string, unknown>;
    } catch {
      // The secret stood where no string is (a number, or across the JSON of a property and its value).
      warnings.push(
        `tool "${tool.name}" (MCP): "${shownName}" is not offered: its input schema holds a secret of the tool where it cannot be redacted`,
      );
      continue;
    }
    const mcpName = entry.name;
    functions.push({
      name: name(mcpFunctionName(tool.name, mcpName), true),
      description: shownOf(entry.description || entry.title || `The tool ${mcpName} of an MCP server.`, secrets, DESCRIPTION_MAX_CHARS),
      parameters,
      toolId: tool.id,
      toolName: tool.name,
      mcpTool: mcpName,
      async call(args, context) {
        let result;
        try {
          result = await client.callTool(
            { name: mcpName, arguments: (args ?? {}) as Record<string, unknown> },
            {
              signal: context.signal,
              timeout: Math.max(1, Math.min(toolTimeout, context.deadline - Date.now())),
              // A list read page by page is not the client's own: it is told the tool's definition.
              ...(cut && { toolDefinition: entry }),
            },
          );
        } catch (error) {
          if (context.signal.aborted) throw context.signal.reason;
          throw new ToolError(describe(error, url.host, toolTimeout, secrets));
        }
        const text = resultText(result, secrets);
        if (result.isError) throw new ToolError(`the MCP tool ${shownName} answered an error: ${shownOf(text, secrets, 500)}`);
        return text;
      },
    });
  }
  return { ok: true, value: { functions, warnings, close } };
}
