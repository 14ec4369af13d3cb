// Text splitters with the semantics of LangChain JS (@langchain/textsplitters 1.x):
// CharacterTextSplitter (separator "\n\n", keepSeparator false) and RecursiveCharacterTextSplitter
// (separators "\n\n", "\n", " ", "", keepSeparator true — LangChain's default for it), length = string
// length, the same `mergeSplits` with overlap and trimmed chunks, and without LangChain's console
// warning when a piece is longer than chunk_size (such a piece becomes a chunk of its own, as in
// LangChain).
//
// The work is done a piece at a time: pieces are found as they are needed and merged as they come,
// so a split can stop at limits on its chunks (LangChain's overlap does not count the separators
// between pieces, so on tiny paragraphs a large overlap makes chunks that each move on by one
// paragraph: a quadratic amount of text) and splitTextInSlices can let other work run in between.
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

/** Bounds on one split: past either, splitting stops with a SplitLimitError instead of going on. */
export interface SplitLimits {
  /** The most chunks it may make. */
  maxChunks: number;
  /** The most characters its chunks may hold together (overlaps counted each time). */
  maxCharacters: number;
}

/** A split stopped because its chunks would pass one of its SplitLimits. */
export class SplitLimitError extends Error {
  constructor(
    readonly limit: 'chunks' | 'characters',
    readonly max: number,
  ) {
    super(limit === 'chunks' ? `the split would make more than ${max} chunks` : `the chunks would hold more than ${max} characters`);
    this.name = 'SplitLimitError';
  }
}

/**
 * A split hands control back to its driver (a null step) after this many pieces, and after each
 * chunk: splitTextInSlices can then pause between small amounts of work.
 */
const PIECES_PER_STEP = 1024;

/** Work done by splitTextInSlices before it lets other callbacks run. */
export const SLICE_MS = 10;

/**
 * The non-empty pieces of `text` split on `separator`, found one at a time (LangChain's
 * `splitOnSeparator`: `text.split(separator)`, or with keepSeparator a split before each place the
 * separator starts, overlapping ones included, as `split(/(?=separator)/)` does; on "" code points).
 */
function pieces(text: string, separator: string, keepSeparator: boolean): Iterable<string> {
  return separator === '' ? text : separatedPieces(text, separator, keepSeparator); // a string iterates by code point
}

function* separatedPieces(text: string, separator: string, keepSeparator: boolean): Generator<string> {
  let start = 0;
  if (keepSeparator) {
    // A split at every place the separator starts, except at 0: each piece but the first starts with it.
    for (let at = text.indexOf(separator, 1); at !== -1; at = text.indexOf(separator, at + 1)) {
      yield text.slice(start, at);
      start = at;
    }
  } else {
    for (let at = text.indexOf(separator); at !== -1; at = text.indexOf(separator, start)) {
      if (at > start) yield text.slice(start, at);
      start = at + separator.length;
    }
  }
  if (start < text.length) yield text.slice(start);
}

/** LangChain's `splitOnSeparator`: keepSeparator keeps each separator at the start of the piece after it; empty pieces dropped. */
export function splitOnSeparator(text: string, separator: string, keepSeparator: boolean): string[] {
  return [...pieces(text, separator, keepSeparator)];
}

function joinDocs(docs: readonly string[], separator: string): string | null {
  const text = docs.join(separator).trim();
  return text === '' ? null : text;
}

/**
 * LangChain's `mergeSplits`, fed one piece at a time: packs pieces into chunks of at most chunkSize
 * (counting `separator` between them), starting each new chunk with the previous chunk's tail of at
 * most chunkOverlap (the pieces' own characters: the separators between them are not counted).
 */
class Merger {
  // The current chunk's pieces are current.slice(head): a queue whose shift is O(1), the same
  // sequence as LangChain's array.
  private current: string[] = [];
  private head = 0;
  private total = 0;
  private readonly separatorLength: number;

  constructor(
    private readonly separator: string,
    private readonly settings: MergeSettings,
  ) {
    this.separatorLength = separator.length;
  }

  /** Adds a piece; returns the chunk it closed, if any. */
  add(piece: string): string | null {
    const { chunkSize, chunkOverlap } = this.settings;
    const len = piece.length;
    let doc: string | null = null;
    if (this.total + len + (this.current.length - this.head) * this.separatorLength > chunkSize && this.current.length > this.head) {
      doc = joinDocs(this.current.slice(this.head), this.separator);
      while (
        this.total > chunkOverlap ||
        (this.total + len + (this.current.length - this.head) * this.separatorLength > chunkSize && this.total > 0)
      ) {
        this.total -= this.current[this.head].length;
        this.head += 1;
      }
      if (this.head > 1024 && this.head * 2 > this.current.length) {
        this.current.splice(0, this.head);
        this.head = 0;
      }
    }
    this.current.push(piece);
    this.total += len;
    return doc;
  }

  /** The last chunk, if any; the merger starts afresh. */
  end(): string | null {
    const doc = joinDocs(this.current.slice(this.head), this.separator);
    this.current = [];
    this.head = 0;
    this.total = 0;
    return doc;
  }
}

/**
 * LangChain's `mergeSplits`: packs pieces into chunks of at most chunkSize (counting `separator`
 * between them), starting each new chunk with the previous chunk's tail of at most chunkOverlap.
 */
export function mergeSplits(splits: readonly string[], separator: string, settings: MergeSettings): string[] {
  const merger = new Merger(separator, settings);
  const docs: string[] = [];
  for (const piece of splits) {
    const doc = merger.add(piece);
    if (doc !== null) docs.push(doc);
  }
  const doc = merger.end();
  if (doc !== null) docs.push(doc);
  return docs;
}

/** What the chunk generators yield: a chunk, or null where the driver may pause. */
type Step = string | null;

/** CharacterTextSplitter.splitText: split on `separator`, merge. */
function* characterChunks(text: string, settings: MergeSettings, separator: string, keepSeparator: boolean): Generator<Step> {
  const merger = new Merger(keepSeparator ? '' : separator, settings);
  let count = 0;
  for (const piece of pieces(text, separator, keepSeparator)) {
    const chunk = merger.add(piece);
    if (chunk !== null) yield chunk;
    if (++count % PIECES_PER_STEP === 0) yield null;
  }
  const last = merger.end();
  if (last !== null) yield last;
}

/** RecursiveCharacterTextSplitter._splitText. */
function* recursiveChunks(text: string, separators: readonly string[], settings: MergeSettings, keepSeparator: boolean): Generator<Step> {
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
  // LangChain gathers the pieces shorter than chunkSize ("good splits") and merges them when a longer
  // one comes (which is split further, or kept whole) and at the end: the merger does it as they come.
  const merger = new Merger(keepSeparator ? '' : separator, settings);
  let count = 0;
  for (const piece of pieces(text, separator, keepSeparator)) {
    if (piece.length < settings.chunkSize) {
      const chunk = merger.add(piece);
      if (chunk !== null) yield chunk;
    } else {
      const chunk = merger.end();
      if (chunk !== null) yield chunk;
      if (!newSeparators) yield piece;
      else yield* recursiveChunks(piece, newSeparators, settings, keepSeparator);
    }
    if (++count % PIECES_PER_STEP === 0) yield null;
  }
  const last = merger.end();
  if (last !== null) yield last;
}

/** The chunks of `text` as a sequence of steps; throws RangeError for settings splitText refuses. */
function chunkSteps(text: string, splitter: SplitterOptions | null | undefined): Generator<Step> {
  const { type, chunk_size: chunkSize, chunk_overlap: chunkOverlap } = splitter ?? DEFAULT_SPLITTER;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError('chunk_size must be a whole number of at least 1');
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0) throw new RangeError('chunk_overlap must be a whole number of at least 0');
  if (chunkOverlap >= chunkSize) throw new RangeError('chunk_overlap must be smaller than chunk_size');
  const settings = { chunkSize, chunkOverlap };
  if (type === 'recursive') return recursiveChunks(text, RECURSIVE_SEPARATORS, settings, true);
  if (type === 'character') return characterChunks(text, settings, CHARACTER_SEPARATOR, false);
  throw new RangeError(`unknown splitter type ${String(type)}`);
}

/** Gathers the chunks of a split; throws SplitLimitError as soon as one more would pass `limits`. */
class Chunks {
  readonly list: string[] = [];
  private characters = 0;

  constructor(private readonly limits: SplitLimits | undefined) {}

  add(chunk: string): void {
    if (this.limits) {
      if (this.list.length >= this.limits.maxChunks) throw new SplitLimitError('chunks', this.limits.maxChunks);
      if (this.characters + chunk.length > this.limits.maxCharacters) throw new SplitLimitError('characters', this.limits.maxCharacters);
    }
    this.characters += chunk.length;
    this.list.push(chunk);
  }
}

/** Runs a split to its end; null steps are passed over. */
function collect(steps: Iterable<Step>, limits: SplitLimits | undefined): string[] {
  const chunks = new Chunks(limits);
  for (const step of steps) if (step !== null) chunks.add(step);
  return chunks.list;
}

/**
 * Splits `text` into chunks as LangChain's CharacterTextSplitter (`character`) or
 * RecursiveCharacterTextSplitter (`recursive`) would, with their default separators; null/undefined
 * means DEFAULT_SPLITTER. Throws RangeError unless 1 ≤ chunk_size and 0 ≤ chunk_overlap < chunk_size,
 * and SplitLimitError, without finishing the split, as soon as its chunks would pass `limits`.
 */
export function splitText(text: string, splitter: SplitterOptions | null | undefined = DEFAULT_SPLITTER, limits?: SplitLimits): string[] {
  return collect(chunkSteps(text, splitter), limits);
}

/**
 * splitText without holding the event loop: it works for about SLICE_MS at a time and lets other
 * callbacks run (setImmediate) between slices, so requests are served while a long text is split.
 * Rejects with `signal`'s reason once it aborts.
 */
export async function splitTextInSlices(
  text: string,
  splitter: SplitterOptions | null | undefined,
  limits?: SplitLimits,
  signal?: AbortSignal,
): Promise<string[]> {
  const chunks = new Chunks(limits);
  let sliceStarted = performance.now();
  for (const step of chunkSteps(text, splitter)) {
    if (step !== null) chunks.add(step);
    if (performance.now() - sliceStarted < SLICE_MS) continue;
    await new Promise<void>((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
    sliceStarted = performance.now();
  }
  return chunks.list;
}

/** The general forms behind `splitText`, for callers (and tests) that need other separators: LangChain's constructor options. */
export function characterTextSplitter(
  text: string,
  options: { chunkSize: number; chunkOverlap: number; separator?: string; keepSeparator?: boolean },
): string[] {
  if (options.chunkOverlap >= options.chunkSize) throw new RangeError('chunk_overlap must be smaller than chunk_size');
  return collect(characterChunks(text, options, options.separator ?? CHARACTER_SEPARATOR, options.keepSeparator ?? false), undefined);
}

/** RecursiveCharacterTextSplitter with LangChain's constructor options (separators default "\n\n", "\n", " ", ""; keepSeparator default true). */
export function recursiveCharacterTextSplitter(
  text: string,
  options: { chunkSize: number; chunkOverlap: number; separators?: readonly string[]; keepSeparator?: boolean },
): string[] {
  if (options.chunkOverlap >= options.chunkSize) throw new RangeError('chunk_overlap must be smaller than chunk_size');
  return collect(recursiveChunks(text, options.separators ?? RECURSIVE_SEPARATORS, options, options.keepSeparator ?? true), undefined);
}
