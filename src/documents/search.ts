// Turning what a user types (or a run's input) into safe FTS5 queries, ranking the matches, and FTS5
// snippets into safe HTML.
import type { SearchHit } from './search-store.js';

const WORD = /[\p{L}\p{N}_]+/gu;
const MAX_TERMS = 32;

/** How the words of a search combine: `all` finds the chunks holding every word, `any` those holding one or more. */
export type Match = 'all' | 'any';

// Words too common to say what a question is about (English; the index folds case and accents).
// Left out of an `any` search, where each would match nearly every chunk.
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves tell please give know`.split(/\s+/),
);

/**
 * The words to search `text` for (letters, digits and _), lower-cased, each once, at most 32;
 * undefined when it holds none. For `any`, common words and single letters (not digits) are left out.
 */
export function searchWords(text: string, match: Match): string[] | undefined {
  const words = new Set<string>();
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    if (match === 'any' && (STOP_WORDS.has(word) || (word.length < 2 && !/\p{N}/u.test(word)))) continue;
    words.add(word);
    if (words.size >= MAX_TERMS) break;
  }
  return words.size === 0 ? undefined : [...words];
}

/** `words` as an FTS5 query matching chunks that hold every one (`all`) or any (`any`). Each word is
 *  a quoted string, so no input (`"`, `AND (`, `NEAR`, `*`) can be read as query syntax. */
export function wordsQuery(words: string[], match: Match): string {
  return words.map((word) => `"${word.replaceAll('"', '""')}"`).join(match === 'all' ? ' ' : ' OR ');
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
 * Relevance from 0 to 1 (higher is better) of matching chunks: BM25 over the searching
 * user's chunks only, divided by the most BM25 could give these words (each word's weight times
 * k1 + 1, reached only by a word repeated without end). So a score reads the same whatever the number
 * of words or of chunks: a chunk of average length holding each word once scores about 0.45, more
 * repetitions and shorter chunks score higher. How rare a word is counts within the user's own
 * documents, so neither the ranking nor its cost depends on what other users store. A word's weight
 * is Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): always positive, where FTS5's bm25()
 * gives a word found in half the chunks or more a weight of 1e-6 (so a small collection scored
 * every hit near 0). A word's frequency in a chunk counts the words of the chunk that begin with it,
 * case folded (at least 1: the index matched a form of it); a chunk's length is its length in
 * characters, against the average of the matching chunks. `holds(chunk, word)` says whether the
 * index matched the word in the chunk (a word it did not match adds nothing); by default every
 * chunk holds every word, as in an `all` search.
 */
export function relevanceScores(
  contents: string[],
  words: string[],
  stats: RankStats,
  holds: (chunk: number, word: number) => boolean = () => true,
): number[] {
  if (contents.length === 0) return [];
  const lowered = words.map((word) => word.toLowerCase());
  const idf = stats.matching.map((n) => Math.log(1 + (stats.chunks - n + 0.5) / (n + 0.5)));
  let best = 0;
  for (const weight of idf) best += weight * (K1 + 1);
  let total = 0;
  for (const content of contents) total += content.length;
  const average = total / contents.length;
  return contents.map((content, chunk) => {
    const text = content.toLowerCase();
    const norm = K1 * (1 - B + (B * content.length) / average);
    let score = 0;
    lowered.forEach((word, i) => {
      if (!holds(chunk, i)) return;
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

/** A hit as the search answers show it (GET /documents/search and the MCP search tool): the snippet as HTML. */
export function presentHit({ chunkId, documentId, documentName, position, score, rawSnippet }: SearchHit) {
  return { chunkId, documentId, documentName, position, score, snippet: snippetHtml(rawSnippet) };
}
