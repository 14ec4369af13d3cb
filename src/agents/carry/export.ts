// An agent as an export file: everything it uses, every secret taken out and named where it was
// (the agent's key, tool settings a kind marks secret or that are named like a credential, a
// document's URL credentials), so the importer knows what to give again.
import { timestamp } from '../../lib/ids.js';
import { nameFrom } from '../../lib/utf8.js';
import { kindOf } from '../../tools/kinds/index.js';
import { SECRET_KEY } from '../../tools/runtime/provider.js';
import type { ToolKind, ToolRecord } from '../../tools/kinds/kind.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type AgentExport, type ExportedTool } from './format.js';
import type { AgentForExport } from './store.js';

/**
 * `metadata` without what is secret: the kind's secret fields, and every key at any depth named
 * like a credential, except inside a document the kind reads (its `specFields`), which is carried
 * whole. Answers the copy and the dotted paths of what was removed.
 */
function withoutSecrets(
  metadata: Record<string, unknown>,
  kind: Pick<ToolKind, 'secretFields' | 'specFields'> | undefined,
): { kept: Record<string, unknown>; removed: string[] } {
  const secretFields = kind?.secretFields ?? [];
  const specFields = kind?.specFields ?? [];
  const removed: string[] = [];
  const strip = (value: unknown, path: string, top: boolean): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item, index) => strip(item, `${path}.${index}`, false));
    const copy: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if ((top && secretFields.includes(key)) || SECRET_KEY.test(key)) removed.push(at);
      else copy[key] = top && specFields.includes(key) ? inner : strip(inner, at, false);
    }
    return copy;
  };
  // Stored metadata was checked at write time (at most 32 levels deep): the walk is bounded.
  return { kept: strip(metadata, '', true) as Record<string, unknown>, removed };
}

function exportTool(tool: ToolRecord, agentId: string, omitted: string[], index: number): ExportedTool {
  const kind = kindOf(tool.type);
  const { kept, removed } = withoutSecrets(tool.metadata, kind);
  let callsThisAgent = false;
  for (const field of kind?.agentFields ?? []) {
    if (kept[field] === undefined) continue;
    if (kept[field] === agentId) callsThisAgent = true;
    else omitted.push(`tools.${index}.metadata.${field}: names another agent, which is not exported`);
    delete kept[field];
  }
  return {
    name: tool.name,
    type: tool.type as ExportedTool['type'],
    description: tool.description ?? null,
    metadata: kept,
    secretFields: removed,
    callsThisAgent,
    requiresApproval: tool.requiresApproval ?? false,
  };
}

/** The export file of one agent (see format.ts). */
export function buildExport(source: AgentForExport): AgentExport {
  const { agent, prompt } = source;
  const omitted = [...source.omitted];
  const file: AgentExport = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: timestamp(),
    agent: {
      name: agent.name,
      description: agent.description,
      avatarUrl: agent.avatarUrl,
      type: agent.type,
      hasMemory: agent.hasMemory,
      llm: { model: agent.llmModel, provider: agent.llmProvider, baseUrl: agent.llmBaseUrl, apiKeyNeeded: agent.hasApiKey },
    },
    prompt: prompt ? { name: prompt.name, template: prompt.template, input_variables: prompt.inputVariables } : null,
    tags: agent.tags.map((tag) => ({ name: tag.name, color: tag.color })),
    tools: source.tools.map((tool, index) => exportTool(tool, agent.id, omitted, index)),
    documents: source.documents.map((document) => ({
      name: document.name,
      type: document.type,
      // An uploaded document's URL is this service's file endpoint, which only its owner can read: the bytes travel instead.
      url: document.file ? null : document.url,
      from_page: document.fromPage,
      to_page: document.toPage,
      splitter: document.splitter,
      metadata: document.metadata,
      authorizationNeeded: document.hasAuthorization,
      isAgentDocument: document.id === source.ownDocumentId,
      linked: source.linkedDocumentIds.has(document.id),
      ...(document.file && {
        file: {
          name: nameFrom(document.file.filename, 'upload'),
          contentType: document.file.contentType,
          base64: document.file.bytes.toString('base64'),
        },
      }),
    })),
  };
  if (source.sessions) file.sessions = source.sessions;
  if (omitted.length > 0) file.omitted = omitted.slice(0, 100);
  return file;
}
