// Turning what a user types into a safe FTS5 query, and FTS5 snippets into safe HTML.

const WORD = /[\p{L}\p{N}_]+/gu;
const MAX_TERMS = 32;

/**
 * An FTS5 query matching chunks that hold every word of `text` (words are letters, digits and _).
 * Each word is a quoted string, so no input (`"`, `AND (`, `NEAR`, `*`) can be read as query syntax.
 * Undefined when `text` holds no word at all.
 */
export function toFtsQuery(text: string): string | undefined {
  const words = text.match(WORD)?.slice(0, MAX_TERMS);
  if (!words || words.length === 0) return undefined;
  return words.map((word) => `"${word}"`).join(' ');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The snippet as HTML: the text escaped, matches in <mark>…</mark> (FTS5 marked them \u0001…\u0002). */
export function snippetHtml(rawSnippet: string): string {
  return rawSnippet
    .replace(/[&<>"']/g, (char) => HTML_ESCAPES[char])
    .replace(/\u0001/g, '<mark>')
    .replace(/\u0002/g, '</mark>');
}
