// Reads the text of a PDF with pdf.js on a worker thread. pdf.js trusts the file: a 1.5 MB PDF
// whose page content inflates to 1.5 GB took 31 s, 3.4 GB of memory and stalls of 6 s of the
// event loop, and a 1 KB PDF whose font maps 16 million character codes took 52 s and 2.3 GB. On a
// worker it holds no other request, is ended when it takes too long, and runs with bounds:
// - its JavaScript heap is limited (resourceLimits): maps, text items and the like;
// - what pdf.js decompresses (typed arrays, outside that heap) is bounded per stream and at any
//   one time;
// - images, which text never needs, are skipped past a small size (they are only met in Type3 fonts);
// - the text is counted as pages give it, and refused past the limit.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Semaphore } from '../lib/semaphore.js';
import { runWorkerScript, WorkerFailed } from '../lib/worker-script.js';
import { formatBytes, formatDuration, IngestError } from './errors.js';

export interface PdfLimits {
  /** The longest a PDF may take to read, loading pdf.js included; the worker is ended then. */
  timeoutMs: number;
  /** The worker's JavaScript heap, in MiB. */
  heapMb: number;
  /** The most one stream (a page's contents, a font, …) may come to once decompressed. */
  streamBytes: number;
  /** The most decompressed data the worker may hold at once, beyond the file itself. */
  bufferBytes: number;
  /** The most characters of text the pages read may give. */
  textCharacters: number;
}

export const PDF_LIMITS: Omit<PdfLimits, 'textCharacters'> = {
  timeoutMs: 60_000,
  heapMb: 256,
  streamBytes: 32 * 1024 * 1024,
  bufferBytes: 256 * 1024 * 1024,
};

/** PDFs read at once; more wait their turn (a worker holds pdf.js, about 100 MiB, and its bounds). */
const WORKERS = 2;

/** What a worker answers. */
type Answer =
  | { pages: number; parts?: { page: number; text: string }[] }
  | { password: true }
  | { unreadable: string }
  | { refused: 'stream' | 'memory' | 'text' };

// Plain JavaScript run by the worker (an evaluated script: nothing to bundle), with pdf.js imported
// from where the service resolves it. pdf.js keeps its stream classes to itself: its worker code
// (which runs in this thread, as pdf.js does without a browser) is loaded from its text with two
// of them exported as well, so that their decoding can be bounded:
// - DecodeStream.ensureBuffer, through which every decoder but Brotli and the image ones grows its
//   output: refused past the stream's limit or the memory limit;
// - DecodeStream.asyncGetBytesFromDecompressionStream, pdf.js's inflating with DecompressionStream
//   (page contents, fonts), which collects all the output: zlib does it here, with maxOutputLength;
//   on any other error pdf.js decodes the stream again with its own decoder (as it does itself);
// - BrotliStream.readBlock, which decodes a whole stream in one call: zlib, with maxOutputLength.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const zlib = require('node:zlib');
const { pdfjs, pdfjsWorker, standardFontDataUrl, cMapUrl, data, fromPage, toPage, limits } = workerData;
const fileBytes = data.byteLength;

// The first limit passed is answered at once (the thread is then ended): pdf.js catches the errors
// of a page and carries on with what it could read.
let answered = false;
const answer = (message) => {
  if (answered) return;
  answered = true;
  clearInterval(watch);
  parentPort.postMessage(message);
};
// What pdf.js throws where nothing catches it: before the answer, the answer (the PDF cannot be
// read); after it, nothing. The thread is not ended by it: an 'error' event of the worker could
// reach the service before the answer it follows (a text limit passed inside pdf.js's stream of a
// page's text, whose stream then fails to close: "Controller is already closed").
const uncaught = (error) => answer({ unreadable: String((error && error.message) || error).slice(0, 200) });
process.on('uncaughtException', uncaught);
process.on('unhandledRejection', uncaught);
class Refused extends Error {}
const refuse = (why) => {
  answer({ refused: why });
  throw new Refused(why);
};
const checkMemory = (more = 0) => {
  if (process.memoryUsage().arrayBuffers - fileBytes + more > limits.bufferBytes) refuse('memory');
};
// Decompressed data also grows between the checks below (images of Type3 fonts, many streams).
const watch = setInterval(() => {
  try {
    checkMemory();
  } catch {}
}, 50);

function bound({ DecodeStream, BrotliStream }) {
  const ensureBuffer = DecodeStream.prototype.ensureBuffer;
  DecodeStream.prototype.ensureBuffer = function (requested) {
    if (requested > this.buffer.byteLength) {
      // It allocates at least minBufferLength: a page's contents in several streams ask for their
      // sum at once.
      const size = Math.max(requested, this.minBufferLength);
      if (size > limits.streamBytes) refuse('stream');
      checkMemory(size);
    }
    return ensureBuffer.call(this, requested);
  };
  const inflate = (name, bytes) =>
    new Promise((resolve, reject) => {
      const decompress = name === 'brotli' ? zlib.brotliDecompress : zlib.inflate;
      decompress(bytes, { maxOutputLength: limits.streamBytes }, (error, output) => (error ? reject(error) : resolve(output)));
    });
  DecodeStream.prototype.asyncGetBytesFromDecompressionStream = async function (name) {
    this.stream.reset();
    const bytes = this.stream.isAsync ? await this.stream.asyncGetBytes() : this.stream.getBytes();
    let output;
    try {
      output = await inflate(name, bytes);
    } catch (error) {
      if (error && error.code === 'ERR_BUFFER_TOO_LARGE') refuse('stream');
      return { decompressed: null, compressed: bytes };
    }
    checkMemory();
    return { decompressed: new Uint8Array(output), compressed: bytes };
  };
  BrotliStream.prototype.readBlock = function () {
    const bytes = this.stream.getBytes();
    let output;
    try {
      output = zlib.brotliDecompressSync(bytes, { maxOutputLength: limits.streamBytes });
    } catch (error) {
      if (error && error.code === 'ERR_BUFFER_TOO_LARGE') refuse('stream');
      throw error;
    }
    this.buffer = new Uint8Array(output);
    this.bufferLength = this.buffer.length;
    this.eof = true;
    checkMemory();
  };
}

async function loadPdfjs() {
  const exported = 'export { WorkerMessageHandler };';
  const source = readFileSync(pdfjsWorker, 'utf8');
  if (!source.includes(exported)) throw new Error('this version of pdf.js cannot be bounded: its worker code ends differently');
  const url = 'data:text/javascript;base64,' + Buffer.from(source.replace(exported, 'export { WorkerMessageHandler, DecodeStream, BrotliStream };')).toString('base64');
  bound(await import(url));
  const api = await import(pdfjs);
  api.GlobalWorkerOptions.workerSrc = url;
  return api;
}

// A page's text items as lines; a blank line where the vertical gap is clearly wider than a line.
function pageText() {
  const lines = [];
  let text = '';
  let y;
  let height = 0;
  const endLine = () => {
    if (text.trim() !== '' || y !== undefined) lines.push({ text: text.trimEnd(), y: y ?? 0, height });
    text = '';
    y = undefined;
    height = 0;
  };
  const add = (item) => {
    const blank = item.str.trim() === '';
    if (y === undefined && !blank && item.transform) y = item.transform[5];
    if (!blank) height = Math.max(height, Math.abs(item.height ?? item.transform?.[3] ?? 0));
    text += item.str;
    if (item.hasEOL) endLine();
  };
  const end = () => {
    endLine();
    let out = '';
    let previous;
    for (const line of lines) {
      if (line.text.trim() === '') continue;
      if (previous) {
        const gap = previous.y - line.y;
        const lineHeight = Math.max(previous.height, line.height, 1);
        out += gap < 0 || gap > 1.6 * lineHeight ? '\\n\\n' : '\\n';
      }
      out += line.text.trim();
      previous = line;
    }
    return out;
  };
  return { add, end };
}

async function read() {
  const { getDocument } = await loadPdfjs();
  const task = getDocument({
    data,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
    standardFontDataUrl,
    cMapUrl,
    cMapPacked: true,
    maxImageSize: limits.imagePixels,
  });
  let document;
  try {
    document = await task.promise;
  } catch (error) {
    const name = (error && error.name) || '';
    if (name === 'PasswordException' || String(error && error.message).includes('password')) return { password: true };
    return { unreadable: error instanceof Error ? error.message.slice(0, 200) : 'unknown error' };
  }
  const pages = document.numPages;
  const from = fromPage ?? 1;
  const to = toPage ?? pages;
  if (from < 1 || to < from || to > pages) return { pages };
  const parts = [];
  let characters = 0;
  for (let number = from; number <= to; number += 1) {
    const page = await document.getPage(number);
    const text = pageText();
    for await (const chunk of page.streamTextContent()) {
      for (const item of chunk.items) {
        if (!('str' in item)) continue;
        characters += item.str.length;
        if (characters > limits.textCharacters) refuse('text');
        text.add(item);
      }
    }
    parts.push({ page: number, text: text.end() });
    page.cleanup();
  }
  return { pages, parts };
}

read().then(answer, uncaught);
`;

const require = createRequire(import.meta.url);
const pdfjsRoot = dirname(require.resolve('pdfjs-dist/package.json'));

/** The workers reading PDFs: WORKERS at once. */
const slots = new Semaphore(WORKERS);

export interface PdfText {
  /** How many pages the document has. */
  pages: number;
  /** The text of each page read; absent when the range is not within the document (nothing was read). */
  parts?: { page: number; text: string }[];
}

/**
 * The page count of a PDF and the text of pages `fromPage`..`toPage` (when within the document).
 * Rejects with IngestError: unsupported (password-protected), parse (not readable), too_large (a
 * stream, the memory or the text past its limit) or timeout.
 */
export async function readPdfText(
  bytes: Uint8Array,
  fromPage: number | null | undefined,
  toPage: number | null | undefined,
  limits: PdfLimits,
): Promise<PdfText> {
  const answer = await readInWorker(bytes, fromPage, toPage, limits);
  if ('pages' in answer) return answer;
  if ('password' in answer) throw new IngestError('unsupported', 'the PDF is password-protected');
  if ('unreadable' in answer) throw new IngestError('parse', `the PDF could not be read: ${answer.unreadable}`);
  throw refusal(answer.refused, limits);
}

function refusal(why: 'stream' | 'memory' | 'text', limits: PdfLimits): IngestError {
  if (why === 'stream') {
    return new IngestError('too_large', `the PDF holds a stream or page that decompresses to more than ${formatBytes(limits.streamBytes)}`);
  }
  if (why === 'memory') return memoryRefusal(limits.bufferBytes);
  return new IngestError(
    'too_large',
    `the PDF's text is longer than ${limits.textCharacters.toLocaleString('en-US')} characters; read fewer pages with from_page and to_page`,
  );
}

const memoryRefusal = (bytes: number) => new IngestError('too_large', `reading the PDF needs more than ${formatBytes(bytes)} of memory`);

async function readInWorker(
  bytes: Uint8Array,
  fromPage: number | null | undefined,
  toPage: number | null | undefined,
  limits: PdfLimits,
): Promise<Answer> {
  // A copy, handed over: pdf.js takes ownership of the buffer it is given.
  const data = new Uint8Array(bytes);
  try {
    return await runWorkerScript<Answer>(slots, WORKER, {
      workerData: {
        pdfjs: pathToFileURL(join(pdfjsRoot, 'legacy', 'build', 'pdf.mjs')).href,
        pdfjsWorker: join(pdfjsRoot, 'legacy', 'build', 'pdf.worker.mjs'),
        standardFontDataUrl: join(pdfjsRoot, 'standard_fonts') + '/',
        cMapUrl: join(pdfjsRoot, 'cmaps') + '/',
        data,
        fromPage: fromPage ?? null,
        toPage: toPage ?? null,
        // Images are only decoded for Type3 fonts' glyphs, which are small.
        limits: { ...limits, imagePixels: 1024 * 1024 },
      },
      transferList: [data.buffer],
      heapMb: limits.heapMb,
      timeoutMs: limits.timeoutMs,
    });
  } catch (error) {
    if (!(error instanceof WorkerFailed)) throw error;
    if (error.reason === 'timeout') {
      throw new IngestError(
        'timeout',
        `reading the PDF took longer than ${formatDuration(limits.timeoutMs)}; read fewer pages with from_page and to_page`,
      );
    }
    if (error.reason === 'memory') throw memoryRefusal(limits.heapMb * 1024 * 1024);
    const why = error.reason === 'exit' ? 'its reader stopped' : error.message.slice(0, 200);
    throw new IngestError('parse', `the PDF could not be read: ${why}`);
  }
}
