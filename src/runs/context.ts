// What a run tells the model before the conversation: the agent's prompt filled with the request's
// variables, and the best chunks of the agent's documents for the input, numbered.
import { invalidRun } from './failures.js';
import type { PromptRow } from '../prompts/store.js';
import { fillTemplate } from '../prompts/template.js';
import type { RunSource } from './store.js';
import type { SearchHit, SearchStore } from '../documents/search-store.js';
import { searchWords } from '../documents/search.js';

export const DEFAULT_SYSTEM_MESSAGE = 'You are a helpful assistant. Answer the user clearly and truthfully.';
/** The longest a filled prompt may be (characters): a template may repeat a large variable or the input. */
export const MAX_FILLED_PROMPT_CHARS = 1_000_000;
/** How many chunks of the agent's documents go into the system message. */
export const CONTEXT_CHUNKS = 4;

/**
 * The best chunks of the agent's documents for the input: those holding any of its words but the
 * common ones, found and ranked as GET /documents/search finds and ranks them (BM25 over the
 * user's chunks); plain-text snippets.
 */
export function contextChunks(search: SearchStore, userId: string, agentId: string, input: string): SearchHit[] {
  const words = searchWords(input, 'any');
  if (words === undefined) return [];
  return search.find({ userId, agentId }, words, { match: 'any', limit: CONTEXT_CHUNKS, snippet: { words: 32, marked: false } });
}

/**
 * The prompt's template with `{name}` replaced by `variables[name]` (`{input}` by the input when no
 * variable of that name is given) and `{{`/`}}` as literal braces. A variable without a value is a
 * `validation_failed` failure naming it.
 */
export function fillPrompt(prompt: Pick<PromptRow, 'template'>, variables: Record<string, string>, input: string): string {
  const valueOf = (name: string) => (Object.hasOwn(variables, name) ? variables[name] : name === 'input' ? input : undefined);
  const { text, missing, tooLong } = fillTemplate(prompt.template, valueOf, MAX_FILLED_PROMPT_CHARS);
  if (tooLong && missing.length === 0) {
    throw invalidRun([
      { path: 'variables', message: `would make the agent's prompt longer than ${MAX_FILLED_PROMPT_CHARS} characters once filled in` },
    ]);
  }
  if (missing.length > 0) {
    throw invalidRun(
      missing.slice(0, 10).map((name) => ({ path: `variables.${name}`, message: `is used by the agent's prompt and has no value` })),
    );
  }
  return text;
}

/** The system message: the prompt (or a default), then the numbered document excerpts when any. */
export function systemMessage(prompt: string | null, chunks: SearchHit[]): string {
  const base = prompt ?? DEFAULT_SYSTEM_MESSAGE;
  if (chunks.length === 0) return base;
  const excerpts = chunks.map((chunk, index) => `[${index + 1}] (${chunk.documentName}, part ${chunk.position + 1})\n${chunk.content}`);
  return `${base}\n\nExcerpts from the user's documents that may help; cite them by number, like [1], when you use them:\n\n${excerpts.join('\n\n')}`;
}

/** The chunks as a run's `sources`. */
export function sourcesOf(chunks: SearchHit[]): RunSource[] {
  return chunks.map((chunk) => ({
    documentId: chunk.documentId,
    documentName: chunk.documentName,
    chunkId: chunk.chunkId,
    position: chunk.position,
    snippet: chunk.rawSnippet,
  }));
}
