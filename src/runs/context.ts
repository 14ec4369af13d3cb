// What a run tells the model before the conversation: the agent's prompt filled with the request's
// variables, and the best chunks of the agent's documents for the input, numbered.
import { invalidRun } from './failures.js';
import type { PromptRow } from '../prompts/store.js';
import type { ContextChunk, RunSource } from './store.js';

export const DEFAULT_SYSTEM_MESSAGE = 'You are a helpful assistant. Answer the user clearly and truthfully.';
/** How many chunks of the agent's documents go into the system message. */
export const CONTEXT_CHUNKS = 4;

const WORD = /[\p{L}\p{N}_]+/gu;
const MAX_TERMS = 32;

// Words too common to say what a question is about (English; the FTS index folds case and accents).
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves tell please give know`.split(/\s+/),
);

/**
 * An FTS5 query matching chunks that hold any word of `text` but the common ones, each word quoted
 * (no input can be read as query syntax). Undefined when no word is left.
 */
export function anyWordQuery(text: string): string | undefined {
  const words = new Set<string>();
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    if (STOP_WORDS.has(word) || (word.length < 2 && !/\p{N}/u.test(word))) continue;
    words.add(word);
    if (words.size >= MAX_TERMS) break;
  }
  if (words.size === 0) return undefined;
  return [...words].map((word) => `"${word}"`).join(' OR ');
}

/**
 * The prompt's template with `{name}` replaced by `variables[name]` (`{input}` by the input when no
 * variable of that name is given) and `{{`/`}}` as literal braces. A variable without a value is a
 * `validation_failed` failure naming it.
 */
export function fillPrompt(prompt: Pick<PromptRow, 'template'>, variables: Record<string, string>, input: string): string {
  const missing: string[] = [];
  const filled = prompt.template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, name: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    const value = Object.hasOwn(variables, name!) ? variables[name!] : name === 'input' ? input : undefined;
    if (value === undefined) {
      if (!missing.includes(name!)) missing.push(name!);
      return match;
    }
    return value;
  });
  if (missing.length > 0) {
    throw invalidRun(
      missing.slice(0, 10).map((name) => ({ path: `variables.${name}`, message: `is used by the agent's prompt and has no value` })),
    );
  }
  return filled;
}

/** The system message: the prompt (or a default), then the numbered document excerpts when any. */
export function systemMessage(prompt: string | null, chunks: ContextChunk[]): string {
  const base = prompt ?? DEFAULT_SYSTEM_MESSAGE;
  if (chunks.length === 0) return base;
  const excerpts = chunks.map((chunk, index) => `[${index + 1}] (${chunk.documentName}, part ${chunk.position + 1})\n${chunk.content}`);
  return `${base}\n\nExcerpts from the user's documents that may help; cite them by number, like [1], when you use them:\n\n${excerpts.join('\n\n')}`;
}

/** The chunks as a run's `sources`. */
export function sourcesOf(chunks: ContextChunk[]): RunSource[] {
  return chunks.map((chunk) => ({
    documentId: chunk.documentId,
    documentName: chunk.documentName,
    chunkId: chunk.chunkId,
    position: chunk.position,
    snippet: chunk.rawSnippet,
  }));
}
