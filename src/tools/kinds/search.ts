// SEARCH: a SearXNG instance (metadata.url, optional headers), asked with `{ query }`; the model
// gets the top results as JSON.
import * as v from 'valibot';
import { callHttp, targetFromMetadata, ToolError, webTargetEntries } from '../runtime/http-call.js';
import { defineKind, offered, stringArgument } from './kind.js';

export const SEARCH_RESULTS = 5;

const QUERY_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string', description: 'What to search for.' } },
  required: ['query'],
  additionalProperties: false,
};

/** The search URL of a SearXNG instance given as its base URL (or already as its /search URL). */
export function searchUrl(base: URL, query: string): URL {
  const url = new URL(base.href);
  if (!/\/search\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/search`;
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  return url;
}

const describe = () =>
  'Searches the web. Returns the top 5 results (title, url, content) as JSON. Use it for recent events or facts you do not know.';

export const search = defineKind({
  type: 'SEARCH',
  label: 'a SearXNG instance',
  metadataSchema: v.looseObject(webTargetEntries),
  secretFields: ['headers'],
  describe,
  async build({ tool, http, name }) {
    const target = targetFromMetadata(tool.metadata);
    if (!target.ok) return target;
    const { url, headers } = target.value;
    return offered({
      name: name(tool.name),
      description: tool.description || describe(),
      parameters: QUERY_SCHEMA,
      toolId: tool.id,
      toolName: tool.name,
      async call(args, context) {
        const query = stringArgument(args, 'query');
        const answer = await callHttp({ url: searchUrl(url, query), method: 'GET', headers }, { ...http, ...context }).catch((error) => {
          if (error instanceof ToolError && / answered HTTP 403/.test(error.message)) {
            throw new ToolError(
              `${error.message} (a SearXNG instance answers 403 when its JSON format is off: add "json" to search.formats in its settings.yml)`,
            );
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
          const text = (value: unknown) => (typeof value === 'string' ? value : '');
          return { title: text(r.title), url: text(r.url), content: text(r.content) };
        });
        return top.length === 0 ? 'No results.' : JSON.stringify(top);
      },
    });
  },
});
