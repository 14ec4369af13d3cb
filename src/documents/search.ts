// Turning what a user types into safe FTS5 queries, ranking the matches, and FTS5 snippets into safe HTML.

const WORD = /[\p{L}\p{N}_]+/gu;
const MAX_TERMS = 32;

/**
 * The words of `text` (letters, digits and _), at most 32, each once; undefined when it holds none.
 * A search matches the chunks holding every one of them.
 */
export function searchWords(text: string): string[] | undefined {
  const words = [...new Set(text.match(WORD) ?? [])].slice(0, MAX_TERMS);
  return words.length === 0 ? undefined : words;
}

/** `words` as an FTS5 query matching every one. Each word is a quoted string, so no input (`"`,
 *  `AND (`, `NEAR`, `*`) can be read as query syntax. */
export function allWordsQuery(words: string[]): string {
  return words.map((word) => `"${word.replaceAll('"', '""')}"`).join(' ');
}

/** What BM25 needs to know of the searching user's chunks. */
export interface RankStats {
  /** How many chunks the user has. */
  chunks: number;
  /** For each query word, how many of the user's chunks match it. */
  matching: number[];
}

// BM25's usual constants (those of FTS5's bm25()).
const K1 = 1.2;
const B = 0.75;

/**
 * Relevance from 0 to 1 (higher is better) of chunks that match every word: BM25 over the searching
 * user's chunks only, divided by the most BM25 could give these words (each word's weight times
 * k1 + 1, reached only by a word repeated without end). So a score reads the same whatever the number
 * of words or of chunks: a chunk of average length holding each word once scores about 0.45, more
 * repetitions and shorter chunks score higher. How rare a word is counts within the user's own
 * documents, so neither the ranking nor its cost depends on what other users store. A word's weight
 * is Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): always positive, where FTS5's bm25()
 * gives a word found in half the chunks or more a weight of 1e-6 (so a small collection scored
 * every hit near 0). A word's frequency in a chunk counts the words of the chunk that begin with it,
 * case folded (at least 1: the index matched a form of it); a chunk's length is its length in
 * characters, against the average of the matching chunks.
 */
export function relevanceScores(contents: string[], words: string[], stats: RankStats): number[] {
  if (contents.length === 0) return [];
  const lowered = words.map((word) => word.toLowerCase());
  const idf = stats.matching.map((n) => Math.log(1 + (stats.chunks - n + 0.5) / (n + 0.5)));
  let best = 0;
  for (const weight of idf) best += weight * (K1 + 1);
  let total = 0;
  for (const content of contents) total += content.length;
  const average = total / contents.length;
  return contents.map((content) => {
    const text = content.toLowerCase();
    const norm = K1 * (1 - B + (B * content.length) / average);
    let score = 0;
    lowered.forEach((word, i) => {
      const tf = Math.max(1, wordStarts(text, word));
      score += (idf[i] * tf * (K1 + 1)) / (tf + norm);
    });
    return score / best;
  });
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/** How many times `word` occurs in `text` at the start of a word. */
function wordStarts(text: string, word: string): number {
  let count = 0;
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + word.length)) {
    if (at === 0 || !WORD_CHAR.test(text[at - 1])) count++;
  }
  return count;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The snippet as HTML: the text escaped, matches in <mark>…</mark> (FTS5 marked them \u0001…\u0002). */
export function snippetHtml(rawSnippet: string): string {
  return rawSnippet
    .replace(/[&<>"']/g, (char) => HTML_ESCAPES[char])
    .replace(/\u0001/g, '<mark>')
    .replace(/\u0002/g, '</mark>');
}
