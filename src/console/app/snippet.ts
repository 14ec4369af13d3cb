// Search snippets arrive as HTML: escaped text with the matched words in <mark>…</mark>. They are
// split on the marks into plain strings, rendered as text nodes (never parsed as HTML).

export interface SnippetPart {
  text: string;
  marked: boolean;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

const unescape = (html: string) => html.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]);

export function snippetParts(html: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  for (const [index, piece] of html.split(/<\/?mark>/).entries()) {
    // The pieces alternate: outside a mark, inside one, outside…
    if (piece) parts.push({ text: unescape(piece), marked: index % 2 === 1 });
  }
  return parts;
}
