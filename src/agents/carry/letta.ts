// Letta's Agent File (`.af`) read as an export of ours: the first agent's name, description, system
// prompt (with its memory blocks written after it, as Letta shows them to the model), model settings
// (never a key: Letta exports none), its tools where one of ours does the same (an MCP tool on a
// Streamable HTTP server), and its user and assistant messages as one memory session. Both layouts
// Letta has written are read: the current one (`agents`, `tools`, `blocks`, `mcp_servers` at the top)
// and the earlier one (one agent's fields at the top, its `tools` and `core_memory` inside).
// Everything else is listed as skipped with the reason.
import * as v from 'valibot';
import { parse } from '../../http/validate.js';
import { cutToLength, nameFrom } from '../../lib/utf8.js';
import { DEFAULT_TAG_COLOR } from '../../tags/schema.js';
import { CARRY_LIMITS, EXPORT_FORMAT, EXPORT_VERSION, type AgentExport, type ExportedTool } from './format.js';

export interface Skipped {
  path: string;
  reason: string;
}

const MAX_ITEMS = 10_000;
const list = <S extends v.GenericSchema>(item: S) =>
  v.optional(v.nullable(v.pipe(v.array(item, 'must be an array'), v.maxLength(MAX_ITEMS, `must hold at most ${MAX_ITEMS} items`))));
const text = v.optional(v.nullable(v.string('must be a string')));

const LlmConfigSchema = v.looseObject({ model: v.string('must be a string'), model_endpoint_type: text, model_endpoint: text });

/** A message's text: a string, or Letta's content parts of which the `text` ones count. */
const ContentSchema = v.optional(
  v.nullable(v.union([v.string(), v.array(v.looseObject({ type: text, text }))], 'must be a string or an array of content parts')),
);
const MessageSchema = v.looseObject({ role: v.string('must be a string'), content: ContentSchema, text });

const ToolSchema = v.looseObject({
  id: text,
  name: v.string('must be a string'),
  tool_type: text,
  description: text,
  metadata_: v.optional(v.nullable(v.looseObject({ mcp: v.optional(v.nullable(v.looseObject({ server_name: text }))) }))),
});
type LettaTool = v.InferOutput<typeof ToolSchema>;

const BlockSchema = v.looseObject({ id: text, label: text, value: text });

const AgentSchema = v.looseObject({
  name: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty')),
  description: text,
  system: text,
  llm_config: LlmConfigSchema,
  messages: list(MessageSchema),
  tool_ids: list(v.string()),
  block_ids: list(v.string()),
  // The earlier layout: the agent's own tools and memory blocks.
  tools: list(ToolSchema),
  core_memory: list(BlockSchema),
  // Names (the current layout) or `{ tag }` objects (the earlier one).
  tags: list(v.union([v.string(), v.looseObject({ tag: v.string() })], 'must be a tag name or { tag }')),
});
type LettaAgent = v.InferOutput<typeof AgentSchema>;

const FileSchema = v.looseObject({
  agents: v.pipe(
    v.array(AgentSchema, 'must be an array of agents'),
    v.minLength(1, 'must hold an agent'),
    v.maxLength(100, 'must hold at most 100 agents'),
  ),
  tools: list(ToolSchema),
  blocks: list(BlockSchema),
  mcp_servers: list(v.looseObject({ server_name: text, server_type: text, server_url: text })),
});

/** Whether `body` looks like a Letta agent file (either layout). */
export function isLettaFile(body: Record<string, unknown>): boolean {
  return Array.isArray(body.agents) || (typeof body.llm_config === 'object' && typeof body.system === 'string');
}

const OPENAI_API = /^https:\/\/api\.openai\.com\/v1\/?$/;

function llmOf(config: LettaAgent['llm_config'], skipped: Skipped[]): AgentExport['agent']['llm'] {
  const type = (config.model_endpoint_type ?? '').toLowerCase();
  const endpoint = config.model_endpoint && /^https?:\/\//i.test(config.model_endpoint) ? config.model_endpoint : null;
  if (type === 'openai') {
    const baseUrl = endpoint && !OPENAI_API.test(endpoint) ? endpoint : null;
    return { model: config.model, provider: baseUrl ? 'openai-compatible' : 'openai', baseUrl, apiKeyNeeded: true };
  }
  if (type === 'ollama') return { model: config.model, provider: 'ollama', baseUrl: null, apiKeyNeeded: false };
  skipped.push({
    path: 'llm_config.model_endpoint_type',
    reason: `Letta's "${type || 'none'}" models have no provider here: imported as ${endpoint ? 'openai-compatible at its endpoint' : 'openai'}; change it if that is wrong`,
  });
  return endpoint
    ? { model: config.model, provider: 'openai-compatible', baseUrl: endpoint, apiKeyNeeded: true }
    : { model: config.model, provider: 'openai', baseUrl: null, apiKeyNeeded: true };
}

/** Why a Letta tool of `toolType` has no counterpart here. */
function reasonFor(toolType: string): string {
  if (toolType.startsWith('letta_') && toolType !== 'letta_builtin')
    return 'a Letta built-in for its own memory, files or agents: this service keeps memory as sessions';
  if (toolType === 'letta_builtin') return 'a Letta built-in (web search, code, fetching): add a SEARCH or MCP tool instead';
  if (toolType === 'external_composio') return 'a Composio tool: no counterpart here';
  return "Python source: this service does not run a tool's code";
}

/** Letta's MCP tools on a Streamable HTTP server become one MCP tool of ours per server, allowing exactly those tools. */
function toolsOf(
  tools: { tool: LettaTool; path: string }[],
  servers: v.InferOutput<typeof FileSchema>['mcp_servers'],
  skipped: Skipped[],
): ExportedTool[] {
  const byServer = new Map<string, { url: string; names: string[] }>();
  tools.forEach(({ tool, path }) => {
    const serverName = tool.metadata_?.mcp?.server_name;
    if (tool.tool_type === 'external_mcp' && serverName) {
      const server = (servers ?? []).find((entry) => entry.server_name === serverName);
      if (server?.server_type === 'streamable_http' && server.server_url && /^https?:\/\//i.test(server.server_url)) {
        const entry = byServer.get(serverName) ?? { url: server.server_url, names: [] };
        entry.names.push(tool.name);
        byServer.set(serverName, entry);
        return;
      }
      skipped.push({ path, reason: `"${tool.name}": its MCP server is not a Streamable HTTP server given by URL` });
      return;
    }
    skipped.push({ path, reason: `"${tool.name}": ${reasonFor(tool.tool_type ?? 'custom')}` });
  });
  return [...byServer].map(([name, server]) => ({
    name: nameFrom(name, 'MCP server'),
    type: 'MCP',
    description: null,
    metadata: { url: server.url, tools: server.names },
    // Letta never exports an MCP server's token or headers.
    secretFields: ['headers'],
    callsThisAgent: false,
    requiresApproval: false,
  }));
}

const messageText = (message: v.InferOutput<typeof MessageSchema>): string => {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part.type === 'text' && part.text ? part.text : '')).join('');
  return message.text ?? '';
};

/** Literal braces in a template are doubled (a single one would be read as a variable). */
const escapeTemplate = (text: string) => text.replace(/[{}]/g, (brace) => brace + brace);

/** The first agent of a Letta file as an export of ours (checked against our format by the caller), and what was left out. */
export function fromLetta(body: Record<string, unknown>): { file: unknown; skipped: Skipped[] } {
  const current = Array.isArray(body.agents);
  const parsed = parse(FileSchema, current ? body : { agents: [body] });
  const agent = parsed.agents[0];
  const at = current ? 'agents.0.' : '';
  const skipped: Skipped[] = [];
  if (parsed.agents.length > 1)
    skipped.push({ path: 'agents', reason: `only the first of its ${parsed.agents.length} agents is imported` });

  const blockIds = new Set(agent.block_ids ?? []);
  const blocks = current ? (parsed.blocks ?? []).filter((block) => block.id && blockIds.has(block.id)) : (agent.core_memory ?? []);
  const system = [
    agent.system ?? '',
    ...blocks.map((block) => `<${block.label ?? 'memory'}>\n${block.value ?? ''}\n</${block.label ?? 'memory'}>`),
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  if (blocks.length > 0)
    skipped.push({
      path: `${at}memory blocks`,
      reason: 'written into the prompt as fixed text: this service has no editable memory blocks',
    });

  const toolIds = new Set(agent.tool_ids ?? []);
  const lettaTools = current
    ? (parsed.tools ?? []).map((tool, index) => ({ tool, path: `tools.${index}` })).filter(({ tool }) => tool.id && toolIds.has(tool.id))
    : (agent.tools ?? []).map((tool, index) => ({ tool, path: `tools.${index}` }));
  const tools = toolsOf(lettaTools, parsed.mcp_servers, skipped);
  const tagNames = [...new Set((agent.tags ?? []).map((tag) => (typeof tag === 'string' ? tag : tag.tag).trim()).filter(Boolean))];

  const messages: { role: 'user' | 'assistant'; content: string }[] = [];
  let other = 0;
  for (const message of agent.messages ?? []) {
    const content = messageText(message);
    if ((message.role === 'user' || message.role === 'assistant') && content.trim() !== '') messages.push({ role: message.role, content });
    else other += 1;
  }
  if (other > 0)
    skipped.push({ path: `${at}messages`, reason: `${other} system, tool or empty messages: only user and assistant text is kept` });

  const file = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: new Date().toISOString(),
    agent: {
      name: nameFrom(agent.name, 'Letta agent'),
      description: agent.description ? cutToLength(agent.description, 1000) : null,
      avatarUrl: null,
      type: 'VENDOR_A',
      hasMemory: messages.length > 0,
      llm: llmOf(agent.llm_config, skipped),
    },
    prompt: system === '' ? null : { name: nameFrom(agent.name, 'Letta agent'), template: escapeTemplate(system), input_variables: [] },
    tags: tagNames.slice(0, CARRY_LIMITS.tags).map((name) => ({ name: nameFrom(name, 'tag'), color: DEFAULT_TAG_COLOR })),
    tools,
    documents: [],
    sessions: messages.length > 0 ? [{ id: 'letta', messages: messages.slice(-CARRY_LIMITS.messages) }] : [],
  };
  if (messages.length > CARRY_LIMITS.messages) {
    skipped.push({ path: `${at}messages`, reason: `only the newest ${CARRY_LIMITS.messages} of ${messages.length} messages are kept` });
  }
  return { file, skipped };
}
