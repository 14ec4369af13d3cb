// SEARCH: a SearXNG instance (metadata.url, optional headers), asked with `{ query }`; the model
// gets the top results as JSON.
import { callHttp, ToolError } from '../runtime/http-call.js';
import { webCallKind } from './web-call.js';

export const SEARCH_RESULTS = 5;

/** The search URL of a SearXNG instance given as its base URL (or already as its /search URL). */
export function searchUrl(base: URL, query: string): URL {
  const url = new URL(base.href);
  if (!/\/search\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/search`;
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  return url;
}

export const search = webCallKind({
  type: 'SEARCH',
  label: 'a SearXNG instance',
  describe: () =>
    'Searches the web. Returns the top 5 results (title, url, content) as JSON. Use it for recent events or facts you do not know.',
  argument: { name: 'query', description: 'What to search for.' },
  async call(query, { url, headers }, options) {
    const answer = await callHttp({ url: searchUrl(url, query), method: 'GET', headers }, options).catch((error) => {
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
