// Text splitters with the semantics of LangChain JS (@langchain/textsplitters 1.x):
// CharacterTextSplitter (separator "\n\n", keepSeparator false) and RecursiveCharacterTextSplitter
// (separators "\n\n", "\n", " ", "", keepSeparator true — LangChain's default for it), length = string
// length, the same `mergeSplits` with overlap and trimmed chunks. Synchronous, and without
// LangChain's console warning when a piece is longer than chunk_size (such a piece becomes a chunk
// of its own, as in LangChain).
//
// One deliberate difference: splitting on "" (the recursive splitter's last resort) splits into
// code points rather than UTF-16 code units, so a chunk never ends inside a surrogate pair (an emoji
// cut in half). Text without characters outside the BMP splits exactly as LangChain's does.

/** A text splitter's settings (the documents' `splitter` field, after defaults). */
export interface Splitter {
  type: 'character' | 'recursive';
  chunk_size: number;
  chunk_overlap: number;
}

export type SplitterOptions = Pick<Splitter, 'type' | 'chunk_size' | 'chunk_overlap'>;

/** LangChain's defaults: CharacterTextSplitter, chunk_size 1000, chunk_overlap 200. */
export const DEFAULT_SPLITTER: SplitterOptions = { type: 'character', chunk_size: 1000, chunk_overlap: 200 };

export const CHARACTER_SEPARATOR = '\n\n';
export const RECURSIVE_SEPARATORS: readonly string[] = ['\n\n', '\n', ' ', ''];

interface MergeSettings {
  chunkSize: number;
  chunkOverlap: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&');
}

/** LangChain's `splitOnSeparator`: keepSeparator keeps each separator at the start of the piece after it; empty pieces dropped. */
export function splitOnSeparator(text: string, separator: string, keepSeparator: boolean): string[] {
  let splits: string[];
  if (separator) {
    splits = keepSeparator ? text.split(new RegExp(`(?=${escapeRegExp(separator)})`)) : text.split(separator);
  } else {
    splits = Array.from(text);
  }
  return splits.filter((s) => s !== '');
}

function joinDocs(docs: readonly string[], separator: string): string | null {
  const text = docs.join(separator).trim();
  return text === '' ? null : text;
}

/**
 * LangChain's `mergeSplits`: packs pieces into chunks of at most chunkSize (counting `separator`
 * between them), starting each new chunk with the previous chunk's tail of at most chunkOverlap.
 */
export function mergeSplits(splits: readonly string[], separator: string, { chunkSize, chunkOverlap }: MergeSettings): string[] {
  const docs: string[] = [];
  // currentDoc is current.slice(head): a queue whose shift is O(1), the same sequence as LangChain's array.
  const current: string[] = [];
  let head = 0;
  const count = () => current.length - head;
  let total = 0;
  for (const d of splits) {
    const len = d.length;
    if (total + len + count() * separator.length > chunkSize) {
      if (count() > 0) {
        const doc = joinDocs(current.slice(head), separator);
        if (doc !== null) docs.push(doc);
        while (total > chunkOverlap || (total + len + count() * separator.length > chunkSize && total > 0)) {
          total -= current[head].length;
          head += 1;
        }
        if (head > 1024 && head * 2 > current.length) {
          current.splice(0, head);
          head = 0;
        }
      }
    }
    current.push(d);
    total += len;
  }
  const doc = joinDocs(current.slice(head), separator);
  if (doc !== null) docs.push(doc);
  return docs;
}

/** CharacterTextSplitter.splitText: split on `separator`, merge. */
function characterSplit(text: string, settings: MergeSettings, separator = CHARACTER_SEPARATOR, keepSeparator = false): string[] {
  const splits = splitOnSeparator(text, separator, keepSeparator);
  return mergeSplits(splits, keepSeparator ? '' : separator, settings);
}

/** RecursiveCharacterTextSplitter._splitText. */
function recursiveSplit(text: string, separators: readonly string[], settings: MergeSettings, keepSeparator = true): string[] {
  const finalChunks: string[] = [];
  let separator = separators[separators.length - 1];
  let newSeparators: readonly string[] | undefined;
  for (let i = 0; i < separators.length; i += 1) {
    const s = separators[i];
    if (s === '') {
      separator = s;
      break;
    }
    if (text.includes(s)) {
      separator = s;
      newSeparators = separators.slice(i + 1);
      break;
    }
  }
  const splits = splitOnSeparator(text, separator, keepSeparator);
  let goodSplits: string[] = [];
  const mergeSeparator = keepSeparator ? '' : separator;
  for (const s of splits) {
    if (s.length < settings.chunkSize) {
      goodSplits.push(s);
    } else {
      if (goodSplits.length) {
        finalChunks.push(...mergeSplits(goodSplits, mergeSeparator, settings));
        goodSplits = [];
      }
      if (!newSeparators) finalChunks.push(s);
      else finalChunks.push(...recursiveSplit(s, newSeparators, settings, keepSeparator));
    }
  }
  if (goodSplits.length) finalChunks.push(...mergeSplits(goodSplits, mergeSeparator, settings));
  return finalChunks;
}

/**
 * Splits `text` into chunks as LangChain's CharacterTextSplitter (`character`) or
 * RecursiveCharacterTextSplitter (`recursive`) would, with their default separators; null/undefined
 * means DEFAULT_SPLITTER. Throws RangeError unless 1 ≤ chunk_size and 0 ≤ chunk_overlap < chunk_size.
 */
export function splitText(text: string, splitter: SplitterOptions | null | undefined = DEFAULT_SPLITTER): string[] {
  const { type, chunk_size: chunkSize, chunk_overlap: chunkOverlap } = splitter ?? DEFAULT_SPLITTER;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError('chunk_size must be a whole number of at least 1');
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0) throw new RangeError('chunk_overlap must be a whole number of at least 0');
  if (chunkOverlap >= chunkSize) throw new RangeError('chunk_overlap must be smaller than chunk_size');
  const settings = { chunkSize, chunkOverlap };
  if (type === 'recursive') return recursiveSplit(text, RECURSIVE_SEPARATORS, settings);
  if (type === 'character') return characterSplit(text, settings);
  throw new RangeError(`unknown splitter type ${String(type)}`);
}

/** The general forms behind `splitText`, for callers (and tests) that need other separators: LangChain's constructor options. */
export function characterTextSplitter(
  text: string,
  options: { chunkSize: number; chunkOverlap: number; separator?: string; keepSeparator?: boolean },
): string[] {
  if (options.chunkOverlap >= options.chunkSize) throw new RangeError('chunk_overlap must be smaller than chunk_size');
  return characterSplit(text, options, options.separator ?? CHARACTER_SEPARATOR, options.keepSeparator ?? false);
}

/** RecursiveCharacterTextSplitter with LangChain's constructor options (separators default "\n\n", "\n", " ", ""; keepSeparator default true). */
export function recursiveCharacterTextSplitter(
  text: string,
  options: { chunkSize: number; chunkOverlap: number; separators?: readonly string[]; keepSeparator?: boolean },
): string[] {
  if (options.chunkOverlap >= options.chunkSize) throw new RangeError('chunk_overlap must be smaller than chunk_size');
  return recursiveSplit(text, options.separators ?? RECURSIVE_SEPARATORS, options, options.keepSeparator ?? true);
}
