// SEARCH (a SearXNG instance) and the plain HTTP tools (ENGINE_ALPHA, HOSTED_MODEL, AUTOMATION_NLA):
// one function each, built from the tool record's metadata.
import type { RunTool } from '../../runs/tool-types.js';
import { callHttp, headersFromMetadata, urlFromMetadata, ToolError, type MetadataResult, type ToolHttp } from './http-call.js';
import { defaultDescription } from './naming.js';

/** The tool record as the runtime needs it: metadata unsealed. */
export interface ToolRecord {
  id: string;
  name: string;
  type: string;
  description?: string | null;
  metadata: Record<string, unknown>;
}

export const SEARCH_RESULTS = 5;
export const PLAIN_HTTP_TYPES = ['ENGINE_ALPHA', 'HOSTED_MODEL', 'AUTOMATION_NLA'] as const;

const QUERY_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string', description: 'What to search for.' } },
  required: ['query'],
  additionalProperties: false,
};
const INPUT_SCHEMA = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The text sent to the service.' } },
  required: ['input'],
  additionalProperties: false,
};

/** The one string field `field` of the model's arguments, or a ToolError saying what was expected. */
export function stringArgument(args: unknown, field: string): string {
  const value = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>)[field] : undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new ToolError(`invalid arguments: expected {"${field}": "<non-empty string>"}`);
  return value;
}

/** The search URL of a SearXNG instance given as its base URL (or already as its /search URL). */
export function searchUrl(base: URL, query: string): URL {
  const url = new URL(base.href);
  if (!/\/search\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/search`;
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  return url;
}

/** The `url` and optional `headers` a SEARCH or plain HTTP tool needs, or why they are unusable. */
function targetFromMetadata(metadata: ToolRecord['metadata']): MetadataResult<{ url: URL; headers: Record<string, string> }> {
  const url = urlFromMetadata(metadata);
  if (!url.ok) return url;
  const headers = headersFromMetadata(metadata);
  if (!headers.ok) return headers;
  return { ok: true, value: { url: url.value, headers: headers.value } };
}

/** The SEARCH function of `tool`, or why it cannot be offered. */
export function searchTool(tool: ToolRecord, name: string, http: ToolHttp): MetadataResult<RunTool> {
  const target = targetFromMetadata(tool.metadata);
  if (!target.ok) return target;
  const { url, headers } = target.value;
  return {
    ok: true,
    value: {
      name,
      description: tool.description || defaultDescription('SEARCH'),
      parameters: QUERY_SCHEMA,
      toolId: tool.id,
      toolName: tool.name,
      async call(args, context) {
        const query = stringArgument(args, 'query');
        const answer = await callHttp({ url: searchUrl(url, query), method: 'GET', headers }, { ...http, ...context }).catch((error) => {
          if (error instanceof ToolError && / answered HTTP 403/.test(error.message)) {
            throw new ToolError(`${error.message} (a SearXNG instance answers 403 when its JSON format is off: add "json" to search.formats in its settings.yml)`);
          }
          throw error;
        });
        let parsed: unknown;
        try {
          parsed = JSON.parse(answer.text);
        } catch {
          throw new ToolError(`the search service did not answer with JSON (is metadata.url a SearXNG instance?)`);
        }
        const results = (parsed as { results?: unknown }).results;
        if (!Array.isArray(results)) throw new ToolError('the search service answered JSON without a "results" list');
        const top = results.slice(0, SEARCH_RESULTS).map((raw) => {
          const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
          const text = (v: unknown) => (typeof v === 'string' ? v : '');
          return { title: text(r.title), url: text(r.url), content: text(r.content) };
        });
        return top.length === 0 ? 'No results.' : JSON.stringify(top);
      },
    },
  };
}

/** The function of a plain HTTP tool (POST `{ "input": … }`, the answer's text back), or why not. */
export function plainHttpTool(tool: ToolRecord, name: string, http: ToolHttp): MetadataResult<RunTool> {
  const target = targetFromMetadata(tool.metadata);
  if (!target.ok) return target;
  const { url, headers } = target.value;
  return {
    ok: true,
    value: {
      name,
      description: tool.description || defaultDescription(tool.type),
      parameters: INPUT_SCHEMA,
      toolId: tool.id,
      toolName: tool.name,
      async call(args, context) {
        const input = stringArgument(args, 'input');
        const answer = await callHttp({ url, method: 'POST', headers, json: { input } }, { ...http, ...context });
        return answer.text;
      },
    },
  };
}
