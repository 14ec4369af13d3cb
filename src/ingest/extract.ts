// Turning fetched bytes into plain text, per document type:
// - TXT: decoded text (BOM or charset honoured, UTF-8 by default), line endings normalised to "\n".
// - CSV: parsed with csv-parse; the first row names the columns; each data row becomes
//   "header: value" lines (empty values left out; a name cut to MAX_CSV_HEADER characters),
//   rows separated by a blank line.
// - URL: HTML parsed with htmlparser2 and reduced to readable text: script, style, noscript, nav,
//   header, footer, aside, svg, forms, hidden elements … dropped; headings, paragraphs, list items
//   and table rows each on their own paragraph. A text/plain answer is taken as is.
// - PDF: text per page with pdfjs-dist (legacy build, no native code) on a worker thread, with
//   limits (pdf-text.ts); pages from_page..to_page inclusive; the page count recorded; a range
//   beyond the document is an error.
// - VIDEO: a WebVTT or SRT caption file reduced to its spoken text (ids, timings, settings, tags
//   and NOTE/STYLE/REGION blocks dropped; a cue repeating the previous one left out); anything else
//   is refused with "transcripts must be given as WebVTT or SRT captions".
// Paragraphs are separated by a blank line ("\n\n"), which is what the character splitter splits on.
// Whatever the type, the text is refused past `textCharacters` (MAX_TEXT_CHARACTERS) as it is built.
import { IngestError, isIngestError } from './errors.js';
import { PDF_LIMITS, readPdfText, type PdfLimits } from './pdf-text.js';

export type DocumentType = 'TXT' | 'PDF' | 'VIDEO' | 'CSV' | 'URL';

export interface PageRange {
  /** First page to read, 1-based (default 1). PDF only. */
  fromPage?: number | null;
  /** Last page to read, inclusive (default: the last page). PDF only. */
  toPage?: number | null;
}

export interface ExtractedPage {
  /** 1-based page number in the document. */
  page: number;
  text: string;
}

export interface Extracted {
  /** The document's text; for a PDF the pages read, joined by a blank line. */
  text: string;
  /** PDF: how many pages the document has. */
  pages?: number;
  /** PDF: how many pages were read (to_page − from_page + 1). */
  pagesRead?: number;
  /** PDF: the text of each page read, to chunk or cite per page. */
  parts?: ExtractedPage[];
}

/**
 * The most characters of text one document may give: what a 20 MiB file of plain text holds. At
 * the default chunk_size the 10,000 chunks a document may make hold about half of it; a larger
 * chunk_size takes more. A CSV file (each value with its column's name) or a PDF (its streams
 * decompressed) can give far more text than its size: the text is counted as it is built.
 */
export const MAX_TEXT_CHARACTERS = 20 * 1024 * 1024;

/** The limits extraction works within (tests lower them). */
export type ExtractLimits = PdfLimits;

export const EXTRACT_LIMITS: ExtractLimits = { ...PDF_LIMITS, textCharacters: MAX_TEXT_CHARACTERS };

/** IngestError('too_large') for `what` (e.g. "the CSV file's text") past `limit` characters. */
function tooMuchText(what: string, limit: number): IngestError {
  return new IngestError('too_large', `${what} is longer than ${limit.toLocaleString('en-US')} characters`);
}

/** `text`, or IngestError('too_large') when it is longer than `limit`. */
function withinLimit(text: string, what: string, limit: number): string {
  if (text.length > limit) throw tooMuchText(what, limit);
  return text;
}

/**
 * The text of a fetched document of type `type` (see the list at the top of this file); the page
 * range applies to PDFs only. Rejects with IngestError (unsupported, parse, page_range, no_text,
 * too_large, timeout).
 */
export async function extractText(
  type: DocumentType,
  bytes: Uint8Array,
  contentType: string | null,
  range: PageRange = {},
  limits: ExtractLimits = EXTRACT_LIMITS,
): Promise<Extracted> {
  const max = limits.textCharacters;
  switch (type) {
    case 'TXT':
      return { text: withinLimit(decodeText(bytes, contentType, 'the text file'), 'the text file', max) };
    case 'CSV':
      return { text: await csvToText(decodeText(bytes, contentType, 'the CSV file'), contentType, max) };
    case 'URL':
      return { text: await webPageToText(bytes, contentType, max) };
    case 'PDF':
      return pdfToText(bytes, contentType, range, limits);
    case 'VIDEO':
      return { text: captionsToText(bytes, contentType, max) };
    default:
      throw new IngestError('unsupported', `documents of type ${String(type)} cannot be ingested`);
  }
}

// ---------------------------------------------------------------------------------------------
// Text decoding

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

function charsetOf(contentType: string | null): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1].toLowerCase();
}

function decoderFor(label: string | undefined): TextDecoder | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label);
  } catch {
    return undefined;
  }
}

// windows-1252 at 0x80–0x9F (0 = unassigned, kept as the C1 control). Node 20's TextDecoder
// decodes windows-1252 (and the iso-8859-1/latin1/ascii labels that mean it) as ISO-8859-1.
const CP1252_HIGH = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0, 0, 0x2018, 0x2019,
  0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    const codes = Array.from(bytes.subarray(i, i + 8192), (b) => (b >= 0x80 && b <= 0x9f && CP1252_HIGH[b - 0x80]) || b);
    out += String.fromCharCode(...codes);
  }
  return out;
}

/** The encoding a byte-order mark at the start of `bytes` names, if any. */
function bomEncoding(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** Decodes with a byte-order mark if any, else `fallbackCharset`, else UTF-8; the BOM is removed. */
function decode(bytes: Uint8Array, fallbackCharset?: string): string {
  const decoder = decoderFor(bomEncoding(bytes)) ?? decoderFor(fallbackCharset) ?? new TextDecoder('utf-8');
  if (decoder.encoding === 'windows-1252') return decodeWindows1252(bytes);
  // TextDecoder drops a BOM of its own encoding; strip a stray U+FEFF left by a mislabelled one.
  return decoder.decode(bytes).replace(/^\uFEFF/, '');
}

function normaliseNewlines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

// Content types that are never text. Not application/octet-stream nor vnd.ms-excel: CSV and text
// files are often served so; binary content is caught by its NUL bytes instead.
const BINARY_TYPES =
  /^(image|audio|video|font|model)\/|^application\/(pdf|zip|gzip|x-gzip|x-tar|x-7z-compressed|x-rar-compressed|msword|vnd\.openxmlformats)/;

/**
 * Refuses a PDF, a binary media type, or content whose start holds a NUL, which text never does.
 * Text in UTF-16 (by its byte-order mark, else its declared charset) is looked at once decoded:
 * its ASCII characters hold NUL bytes.
 */
function refuseBinary(bytes: Uint8Array, contentType: string | null, what: string): void {
  const type = mediaType(contentType);
  if (startsWithPdf(bytes)) throw new IngestError('unsupported', `${what} is a PDF; give the document type PDF`);
  if (BINARY_TYPES.test(type)) throw new IngestError('unsupported', `${what} is not text (the URL answered ${type})`);
  const head = bytes.subarray(0, 8192);
  const charset = charsetOf(contentType);
  const encoding = (decoderFor(bomEncoding(bytes)) ?? decoderFor(charset))?.encoding ?? '';
  const binary = encoding.startsWith('utf-16') ? decode(head, charset).includes('\0') : head.includes(0);
  if (binary) throw new IngestError('unsupported', `${what} is not text (it holds binary data)`);
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/**
 * Refuses a web page given as TXT or CSV (its scripts and markup would be indexed as text): one
 * the server calls HTML, or one that reads as HTML when the server does not call it text. A page
 * served as text/plain (the raw source of a page, say) is the text it says it is.
 */
function refuseHtml(text: string, contentType: string | null): void {
  const type = mediaType(contentType);
  if (HTML_TYPES.has(type) || (!type.startsWith('text/') && looksLikeHtml(text))) {
    throw new IngestError('unsupported', 'the URL answered a web page (HTML); use the document type URL');
  }
}

/** Plain text of a TXT or CSV body: refused when it is binary or a web page; newlines normalised. */
function decodeText(bytes: Uint8Array, contentType: string | null, what: string): string {
  refuseBinary(bytes, contentType, what);
  const text = decode(bytes, charsetOf(contentType));
  refuseHtml(text, contentType);
  return normaliseNewlines(text);
}

// ---------------------------------------------------------------------------------------------
// CSV

/** The delimiter of the first record: the most frequent of , ; tab | outside quotes (comma on a tie). */
function sniffDelimiter(text: string, contentType: string | null): string {
  if (mediaType(contentType) === 'text/tab-separated-values') return '\t';
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
    ['|', 0],
  ]);
  let quoted = false;
  for (const char of text.slice(0, 64 * 1024)) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === '\n') break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}

// The CSV and HTML parsers are loaded with the first document that needs them, not at start-up: a
// service that never ingests such a document does not hold them (or htmlparser2's entity tables).

/** The longest column name repeated before each value; a longer one is cut there (with "…"). */
export const MAX_CSV_HEADER = 200;

function columnName(name: string, index: number): string {
  const trimmed = name.trim();
  if (trimmed === '') return `column ${index + 1}`;
  if (trimmed.length <= MAX_CSV_HEADER) return trimmed;
  return `${trimmed.slice(0, MAX_CSV_HEADER).replace(/[\uD800-\uDBFF]$/, '')}…`;
}

/**
 * CSV text as "header: value" lines per row, rows separated by a blank line. Each row is turned
 * into text as the parser reads it (the parsed rows are not kept), counting the characters: the
 * column names repeated before every value make the text far longer than the file, and past
 * `maxCharacters` the file is refused.
 */
export async function csvToText(text: string, contentType: string | null = null, maxCharacters = MAX_TEXT_CHARACTERS): Promise<string> {
  const { parse: parseCsv } = await import('csv-parse/sync');
  let headers: string[] | undefined;
  const rows: string[] = [];
  let characters = 0;
  const takeRecord = (record: string[]) => {
    if (headers === undefined) {
      headers = record.map(columnName);
      return null;
    }
    const lines: string[] = [];
    record.forEach((raw, i) => {
      const value = raw.trim();
      if (value === '') return;
      const line = `${headers![i] ?? `column ${i + 1}`}: ${value}`;
      characters += (lines.length > 0 ? 1 : rows.length > 0 ? 2 : 0) + line.length;
      if (characters > maxCharacters) throw tooMuchText("the CSV file's text", maxCharacters);
      lines.push(line);
    });
    if (lines.length > 0) rows.push(lines.join('\n'));
    return null;
  };
  try {
    parseCsv(text, {
      delimiter: sniffDelimiter(text, contentType),
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      skip_records_with_empty_values: true,
      on_record: takeRecord,
    });
  } catch (error) {
    if (isIngestError(error)) throw error;
    const detail = error instanceof Error ? error.message.split('\n')[0].slice(0, 200) : 'unknown error';
    throw new IngestError('parse', `the CSV file could not be parsed: ${detail}`);
  }
  return rows.join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// HTML

/** The parts of htmlparser2's (domhandler's) nodes used here. */
interface DomNode {
  type: string; // 'text', 'tag', 'script', 'style', 'cdata', 'comment', 'directive'
  data?: string;
  name?: string;
  attribs?: Record<string, string>;
  children?: DomNode[];
}

/** Elements whose whole content is dropped. */
const DROPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'nav',
  'header',
  'footer',
  'aside',
  'svg',
  'math',
  'form',
  'button',
  'input',
  'select',
  'textarea',
  'option',
  'label',
  'iframe',
  'object',
  'embed',
  'canvas',
  'video',
  'audio',
  'map',
  'dialog',
  'head',
  'title',
  'meta',
  'link',
  'base',
]);
const DROPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar', 'dialog', 'alert']);

/** Elements that stand as paragraphs of their own. */
const BLOCKS = new Set([
  'address',
  'article',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'dir',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hgroup',
  'hr',
  'html',
  'legend',
  'li',
  'main',
  'menu',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'thead',
  'tfoot',
  'tr',
  'ul',
]);
const CELLS = new Set(['td', 'th']);

function isHidden(attribs: Record<string, string>): boolean {
  if ('hidden' in attribs) return true;
  if ((attribs['aria-hidden'] ?? '').toLowerCase() === 'true') return true;
  if (DROPPED_ROLES.has((attribs.role ?? '').toLowerCase())) return true;
  return /(^|;)\s*(display\s*:\s*none|visibility\s*:\s*hidden)\s*(!important\s*)?(;|$)/i.test(attribs.style ?? '');
}

/** How deep a page may nest its elements (real pages stay within a few hundred). */
export const MAX_HTML_DEPTH = 2_000;

/**
 * The page's DOM. htmlparser2 keeps its open elements in an array it grows at the front, so each
 * element costs as much as the depth it opens at: a page nested 100,000 deep took some 20 s of the
 * event loop. Depth is counted as the parser opens and closes elements (implied closes included),
 * and a page past MAX_HTML_DEPTH is refused as soon as it gets there.
 */
async function parseHtml(html: string): Promise<{ children: unknown[] }> {
  const { DomHandler, Parser } = await import('htmlparser2');
  const options = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true };
  const handler = new DomHandler();
  const open = handler.onopentag.bind(handler);
  const close = handler.onclosetag.bind(handler);
  let depth = 0;
  handler.onopentag = (name, attribs) => {
    depth += 1;
    if (depth > MAX_HTML_DEPTH) throw new IngestError('parse', `the page nests its elements more than ${MAX_HTML_DEPTH} deep`);
    open(name, attribs);
  };
  handler.onclosetag = () => {
    depth -= 1;
    close();
  };
  new Parser(handler, options).end(html);
  return handler.root;
}

/**
 * Readable text of an HTML document: paragraphs separated by blank lines, whitespace collapsed;
 * refused past `maxCharacters`.
 */
export async function htmlToText(html: string, maxCharacters = MAX_TEXT_CHARACTERS): Promise<string> {
  const document = await parseHtml(html);
  const paragraphs: string[] = [];
  let characters = 0;
  // The paragraph being built (inline text), as parts joined at its end. Nothing here re-reads the
  // whole paragraph per node (a regular expression over it at every <br>, cell or text node made a
  // page of 40,000 table cells take over a minute): only its last part is looked at.
  let parts: string[] = [];
  let hasText = false; // whether the paragraph holds more than white space
  let preDepth = 0;

  const lastChar = () => (parts.length === 0 ? '' : parts[parts.length - 1].slice(-1));
  /**
   * Drops the spaces at the end of the paragraph (each character is dropped once at most). Read
   * from the end, not with / +$/: that tries every space of a run as a start, and a <pre> of
   * 200,000 spaces followed by a word and a <br> took 18 s.
   */
  const trimTrailingSpaces = () => {
    while (parts.length > 0) {
      const last = parts[parts.length - 1];
      let end = last.length;
      while (end > 0 && last.charCodeAt(end - 1) === 0x20) end -= 1;
      if (end > 0) {
        parts[parts.length - 1] = last.slice(0, end);
        return;
      }
      parts.pop();
    }
  };
  const push = (text: string) => {
    if (text === '') return;
    parts.push(text);
    if (!hasText && text.trim() !== '') hasText = true;
  };
  const flush = () => {
    const line = parts.join('');
    const text = preDepth > 0 ? line.replace(/^\n+/, '').trimEnd() : line.replace(/ ?\n ?/g, '\n').trim();
    parts = [];
    hasText = false;
    if (text === '') return;
    characters += (paragraphs.length > 0 ? 2 : 0) + text.length;
    if (characters > maxCharacters) throw tooMuchText("the page's text", maxCharacters);
    paragraphs.push(text);
  };
  const append = (text: string) => {
    if (preDepth > 0) {
      push(text);
      return;
    }
    const collapsed = text.replace(/\s+/g, ' ');
    const last = lastChar();
    push(last === '' || last === ' ' || last === '\n' ? collapsed.replace(/^ /, '') : collapsed);
  };

  // Walked with a stack of its own, not by recursion: a page nested 100,000 deep is hostile input,
  // not a reason for a RangeError. An entry is a node to visit or what to do once a block's
  // children are done; children are pushed in reverse so they are visited in order.
  type Step = DomNode | (() => void);
  const stack: Step[] = [];
  const pushChildren = (nodes: readonly DomNode[]) => {
    for (let i = nodes.length - 1; i >= 0; i -= 1) stack.push(nodes[i]);
  };
  const visit = (node: DomNode) => {
    if (node.type === 'text') {
      append(node.data ?? '');
    } else if (node.type === 'tag' || node.type === 'script' || node.type === 'style') {
      const name = (node.name ?? '').toLowerCase();
      const attribs = node.attribs ?? {};
      const children = node.children ?? [];
      if (DROPPED.has(name) || isHidden(attribs)) return;
      if (name === 'br') {
        if (lastChar() === ' ') trimTrailingSpaces();
        push('\n');
      } else if (name === 'img') {
        // alt text of an image is part of what a reader is told
        const alt = (attribs.alt ?? '').trim();
        if (alt) append(` ${alt} `);
      } else if (CELLS.has(name)) {
        if (hasText && lastChar() !== '\n') {
          trimTrailingSpaces();
          push(' | ');
        }
        pushChildren(children);
      } else if (BLOCKS.has(name)) {
        flush();
        if (name === 'pre') preDepth += 1;
        stack.push(() => {
          flush();
          if (name === 'pre') preDepth -= 1;
        });
        pushChildren(children);
      } else {
        pushChildren(children);
      }
    } else if (node.type === 'cdata' && node.children) {
      pushChildren(node.children);
    }
  };
  pushChildren(document.children as unknown as DomNode[]);
  while (stack.length > 0) {
    const step = stack.pop()!;
    if (typeof step === 'function') step();
    else visit(step);
  }
  flush();
  return paragraphs.join('\n\n');
}

/** The charset a page declares in its first bytes (<meta charset> or http-equiv), if any. */
function sniffHtmlCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 4096)).toString('latin1');
  const match = /<meta[^>]+charset\s*=\s*["']?\s*([-\w.:]+)/i.exec(head);
  return match?.[1].toLowerCase();
}

const SPACE = /\s*/y;
const HTML_START = /<(!doctype\s+html|html|head|body|meta|title|div|p|h[1-6]|main|article)\b/iy;

/**
 * Whether `text` begins, after white space and comments, with a tag a web page begins with. Read
 * in linear time: each comment is skipped with one indexOf (a backtracking regular expression over
 * repeated comments took time exponential in their number).
 */
export function looksLikeHtml(text: string): boolean {
  let at = 0;
  for (;;) {
    SPACE.lastIndex = at;
    SPACE.test(text);
    at = SPACE.lastIndex;
    if (!text.startsWith('<!--', at)) break;
    const end = text.indexOf('-->', at + 4);
    if (end === -1) return false;
    at = end + 3;
  }
  HTML_START.lastIndex = at;
  return HTML_START.test(text);
}

async function webPageToText(bytes: Uint8Array, contentType: string | null, maxCharacters: number): Promise<string> {
  const type = mediaType(contentType);
  if (startsWithPdf(bytes) || type === 'application/pdf') {
    throw new IngestError('unsupported', 'the URL answered a PDF, not a web page; give the document type PDF');
  }
  if (BINARY_TYPES.test(type)) throw new IngestError('unsupported', `the URL answered ${type}, not a web page`);
  const charset = charsetOf(contentType) ?? sniffHtmlCharset(bytes);
  const text = decode(bytes, charset);
  if (looksLikeHtml(text) || type.includes('html') || type === 'text/xml' || type === 'application/xml') {
    return htmlToText(text, maxCharacters);
  }
  // Not a web page but text all the same (text/plain, JSON, …): taken as is.
  refuseBinary(bytes, contentType, "the URL's answer");
  return withinLimit(normaliseNewlines(text).trim(), "the URL's answer", maxCharacters);
}

// ---------------------------------------------------------------------------------------------
// PDF

export function startsWithPdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(0, 1024)).includes('%PDF-');
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

async function pdfToText(bytes: Uint8Array, contentType: string | null, range: PageRange, limits: ExtractLimits): Promise<Extracted> {
  if (!startsWithPdf(bytes)) {
    const type = mediaType(contentType);
    throw new IngestError('unsupported', `the document is not a PDF${type ? ` (the URL answered ${type})` : ''}`);
  }
  const { pages, parts = [] } = await readPdfText(bytes, range.fromPage, range.toPage, limits);
  const from = range.fromPage ?? 1;
  const to = range.toPage ?? pages;
  if (from > pages) {
    throw new IngestError('page_range', `from_page ${from} is beyond the end of the document, which has ${plural(pages, 'page')}`);
  }
  if (to > pages) {
    throw new IngestError('page_range', `to_page ${to} is beyond the end of the document, which has ${plural(pages, 'page')}`);
  }
  if (from < 1 || to < from) throw new IngestError('page_range', `the page range ${from}–${to} is empty`);
  const text = parts
    .map((part) => part.text)
    .filter((part) => part !== '')
    .join('\n\n');
  if (text.trim() === '') {
    const which = from === to ? `page ${from}` : `pages ${from}–${to}`;
    throw new IngestError('no_text', `the PDF has no text on ${which} (a scanned PDF needs OCR, which is not done here)`);
  }
  return { text, pages, pagesRead: to - from + 1, parts };
}

// ---------------------------------------------------------------------------------------------
// Captions (VIDEO)

const CAPTIONS_ONLY = 'transcripts must be given as WebVTT or SRT captions';
const TIMING = /^\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}\s*-->\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}/;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', lrm: '', rlm: '' };

function cueText(lines: readonly string[]): string {
  return lines
    .map((line) =>
      // <v Speaker>, <c.class>, <i>, <00:00:01.000> … (SRT's <i>, <font> too), then SRT/ASS override
      // tags such as {\an8}; without a regular expression, which took time quadratic in a line of '<'.
      dropSpans(dropSpans(line, '<', '>'), '{\\', '}')
        .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
          if (body[0] === '#') {
            const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
            return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
          }
          return ENTITIES[body.toLowerCase()] ?? entity;
        })
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((line) => line !== '')
    .join('\n');
}

/** `text` without each span from `open` to the next `close` (an `open` with no `close` after it stays). */
function dropSpans(text: string, open: string, close: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const start = text.indexOf(open, at);
    const end = start === -1 ? -1 : text.indexOf(close, start + open.length);
    if (end === -1) return out + text.slice(at);
    out += text.slice(at, start);
    at = end + close.length;
  }
}

const isWebVtt = (text: string) => /^WEBVTT(?:[ \t].*)?(?:\n|$)/.test(text);

/** SRT: the first or second line after leading white space holds the first cue's timing. */
const isSrt = (text: string) =>
  TIMING.test(
    text
      .trimStart()
      .split('\n', 2)
      .find((line) => line.includes('-->')) ?? '',
  );

/** Whether decoded text (its start is enough) begins as WebVTT or SRT captions do. */
export const looksLikeCaptions = (text: string) => {
  const normalised = normaliseNewlines(text.replace(/^\uFEFF/, ''));
  return isWebVtt(normalised) || isSrt(normalised);
};

/** The cues' text of WebVTT or SRT captions, one cue per paragraph; refused past `maxCharacters`. */
export function captionsToText(bytes: Uint8Array, contentType: string | null = null, maxCharacters = MAX_TEXT_CHARACTERS): string {
  const type = mediaType(contentType);
  if (/^(video|audio|image)\//.test(type) || startsWithPdf(bytes)) {
    throw new IngestError('unsupported', `${CAPTIONS_ONLY}; the URL answered ${type || 'a PDF'}`);
  }
  const text = normaliseNewlines(decode(bytes, charsetOf(contentType)));
  const isVtt = isWebVtt(text);
  if (!isVtt && !isSrt(text)) {
    const said = type && type !== 'text/plain' && type !== 'application/octet-stream' ? `; the URL answered ${type}` : '';
    throw new IngestError('unsupported', `${CAPTIONS_ONLY}${said}`);
  }
  const blocks = text.split(/\n[ \t]*\n/);
  const cues: string[] = [];
  let characters = 0;
  for (const [index, block] of blocks.entries()) {
    const lines = block.split('\n').filter((line, i) => i > 0 || line.trim() !== '');
    if (lines.length === 0) continue;
    if (isVtt && index === 0) continue; // the WEBVTT header block
    if (isVtt && /^(NOTE|STYLE|REGION)(\s|$)/.test(lines[0])) continue;
    const timing = lines.findIndex((line) => line.includes('-->'));
    if (timing < 0 || timing > 1 || !TIMING.test(lines[timing])) continue; // not a cue
    const cue = cueText(lines.slice(timing + 1));
    if (cue === '' || cue === cues[cues.length - 1]) continue;
    characters += (cues.length > 0 ? 2 : 0) + cue.length;
    if (characters > maxCharacters) throw tooMuchText("the captions' text", maxCharacters);
    cues.push(cue);
  }
  return cues.join('\n\n');
}
