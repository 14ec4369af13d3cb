// A document uploaded as a file: POST /documents with a multipart/form-data body, parsed by busboy
// as it arrives. The file's bytes go to the database a part at a time (file-store.ts), so an upload
// holds at most a part in memory; past UPLOAD_MAX_BYTES it is answered 413 at once, without reading
// the rest. The document is created only once the whole body has arrived, its fields are valid and
// the file's content fits its type; any other ending deletes the parts written, so a refused,
// malformed or cut-short upload leaves nothing behind.
import busboy from 'busboy';
import * as v from 'valibot';
import type { AppContext } from '../http/context.js';
import { ApiError, invalidForm, payloadTooLarge, validationFailed } from '../http/errors.js';
import { API_PREFIX } from '../http/route.js';
import { parse } from '../http/validate.js';
import { newId } from '../lib/ids.js';
import { cutToLength, nameFrom } from '../lib/utf8.js';
import { contentMismatch, detectType, HEAD_BYTES, servedMediaType } from '../ingest/sniff.js';
import { PART_BYTES, type FileStore } from './file-store.js';
import { UploadFieldsSchema } from './schema.js';
import type { DocumentRow, DocumentStore } from './store.js';

/** The most bytes of one form field (`metadata` and `splitter` are JSON text). */
export const MAX_FIELD_BYTES = 64 * 1024;

const FIELD_NAMES = new Set(Object.keys(UploadFieldsSchema.entries));
/** Fields sent as JSON text. */
const JSON_FIELDS = new Set(['splitter', 'metadata']);

/** Whether the request's body is multipart/form-data (told from the header alone, before any byte is read). */
export function isMultipart(ctx: AppContext): boolean {
  const type = ctx.req.headers['content-type'];
  return type !== undefined && /^\s*multipart\/form-data\s*(;|$)/i.test(type);
}

/** An upload: POST /api/v1/documents with a multipart/form-data body (the JSON body parser leaves it unread). */
export function isUploadRequest(ctx: AppContext): boolean {
  return ctx.method === 'POST' && /^\/api\/v1\/documents\/?$/i.test(ctx.path) && isMultipart(ctx);
}

export interface UploadDeps {
  documents: DocumentStore;
  files: FileStore;
  maxBytes: number;
}

interface ReceivedFile {
  filename: string;
  contentType: string;
  size: number;
  head: Buffer;
}

/** Reads the upload in `ctx` and creates its document (pending); throws an ApiError for anything refused. */
export async function createUploadedDocument(ctx: AppContext, userId: string, deps: UploadDeps): Promise<DocumentRow> {
  const id = newId();
  try {
    const { fields, file } = await receive(ctx, id, deps);
    if (!file) throw validationFailed([{ path: 'file', message: 'is required: send the file in the part named file' }]);
    if (file.size === 0) throw validationFailed([{ path: 'file', message: 'is empty' }]);
    const input = parse(UploadFieldsSchema, formValues(fields));
    const type = input.type ?? detectType(file.head, file.filename, file.contentType);
    if (type === undefined) {
      throw validationFailed([{ path: 'type', message: 'could not be told from the file (it is not text, a PDF or captions): give it' }]);
    }
    const mismatch = contentMismatch(type, file.head, file.filename, file.contentType);
    if (mismatch) throw validationFailed([{ path: 'file', message: `does not match the type ${type}: ${mismatch}` }]);
    // The file's name, one line, cut as NameSchema accepts it: the document can be PATCHed with the name it shows.
    const name = input.name ?? nameFrom(file.filename, 'upload');
    return deps.documents.createUploaded(
      userId,
      id,
      { ...input, name, type, url: fileUrl(ctx, id), authorization: null },
      { filename: file.filename, contentType: servedMediaType(type, file.contentType, file.head), size: file.size },
    );
  } catch (error) {
    deps.files.discard(id);
    throw error;
  }
}

/** The document's `url`: where its owner gets the file back (absolute when the request named a valid host). */
export function fileUrl(ctx: AppContext, id: string): string {
  const path = `${API_PREFIX}/documents/${id}/file`;
  try {
    return new URL(path, `${ctx.protocol}://${ctx.host}`).href;
  } catch {
    return path;
  }
}

/** The form's text fields as the JSON body would give them: empty ones left out, numbers and JSON read. */
function formValues(fields: Map<string, string>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, text] of fields) {
    if (text.trim() === '') continue;
    if (JSON_FIELDS.has(name)) {
      try {
        values[name] = JSON.parse(text);
      } catch {
        throw validationFailed([{ path: name, message: 'must be JSON (an object, or null)' }]);
      }
    } else if (name === 'from_page' || name === 'to_page') {
      values[name] = /^\s*\d{1,15}\s*$/.test(text) ? Number(text) : text === 'null' && name === 'to_page' ? null : text;
    } else {
      values[name] = text;
    }
  }
  return values;
}

/**
 * Parses the body: its fields, and its one file written to the database under `id` as it arrives.
 * Rejects, with the parts written deleted, as soon as something is wrong (413 past the limit,
 * before the rest has arrived); resolves once the whole body has been read.
 */
function receive(
  ctx: AppContext,
  id: string,
  { files, maxBytes }: UploadDeps,
): Promise<{ fields: Map<string, string>; file?: ReceivedFile }> {
  return new Promise((resolve, reject) => {
    const req = ctx.req;
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        // busboy signals `limit` on reaching fileSize: one byte more, so a file of exactly maxBytes is taken.
        limits: { fileSize: maxBytes + 1, files: 1, fields: FIELD_NAMES.size, fieldSize: MAX_FIELD_BYTES, fieldNameSize: 100, parts: 20 },
      });
    } catch (error) {
      reject(invalidForm(`The multipart/form-data body cannot be read: ${(error as Error).message}.`));
      return;
    }
    const fields = new Map<string, string>();
    let file: ReceivedFile | undefined;
    let settled = false;

    const fail = (error: ApiError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // Stop reading: the answer goes out now, and the connection closes after it.
      req.pause();
      ctx.set('Connection', 'close');
      files.discard(id);
      reject(error);
    };
    // A field or part that is wrong is answered once the body has been read (the rest is read and
    // dropped, bounded by the size limit): a client still sending it would otherwise meet a closed
    // connection (EPIPE) instead of the answer. Only 413 and a malformed body stop reading at once.
    let problem: ApiError | undefined;
    const refuse = (path: string, message: string) => {
      problem ??= validationFailed([{ path, message }]);
    };

    parser.on('field', (name, value, info) => {
      if (settled || problem) return;
      if (info.nameTruncated || !FIELD_NAMES.has(name)) {
        return refuse(name, name === 'file' ? 'must be sent as a file (a part with a filename)' : 'is not a field of an upload');
      }
      if (info.valueTruncated) return refuse(name, `must be at most ${MAX_FIELD_BYTES} bytes`);
      if (fields.has(name)) return refuse(name, 'is given more than once');
      fields.set(name, value);
    });

    parser.on('file', (name, stream, info) => {
      if (settled || problem || name !== 'file' || file) {
        stream.resume();
        return refuse(name, name === 'file' ? 'only one file may be uploaded' : 'only the part named file may hold a file');
      }
      const received: ReceivedFile = {
        filename: cutToLength(info.filename ?? '', 255),
        contentType: info.mimeType ?? 'application/octet-stream',
        size: 0,
        head: Buffer.alloc(0),
      };
      file = received;
      // One part's buffer for the whole upload, filled and written again and again: a new buffer
      // per part (or the chunks kept until a part is full) would be garbage outside the JavaScript
      // heap, which the collector lets grow by tens of megabytes before it looks.
      const pending = Buffer.allocUnsafeSlow(PART_BYTES);
      let pendingBytes = 0;
      let part = 0;
      const flush = () => {
        if (pendingBytes === 0) return;
        files.appendPart(id, part++, pending.subarray(0, pendingBytes));
        pendingBytes = 0;
      };
      stream.on('data', (chunk: Buffer) => {
        if (settled || problem) return;
        if (received.head.length < HEAD_BYTES) {
          received.head = Buffer.concat([received.head, chunk.subarray(0, HEAD_BYTES - received.head.length)]);
        }
        received.size += chunk.length;
        // Parts of exactly PART_BYTES (the last one shorter).
        for (let at = 0; at < chunk.length;) {
          const take = Math.min(PART_BYTES - pendingBytes, chunk.length - at);
          chunk.copy(pending, pendingBytes, at, at + take);
          pendingBytes += take;
          at += take;
          if (pendingBytes === PART_BYTES) flush();
        }
      });
      stream.on('limit', () => fail(problem ?? payloadTooLarge(maxBytes)));
      // A body cut short mid-file errors the file stream too; the parser's own error says so.
      stream.on('error', () => {});
      stream.on('end', () => {
        if (!settled && !problem) flush();
      });
    });

    parser.on('filesLimit', () => refuse('file', 'only one file may be uploaded'));
    parser.on('fieldsLimit', () => refuse('body', 'has too many fields'));
    parser.on('partsLimit', () => refuse('body', 'has too many parts'));
    parser.on('error', (error: Error) => fail(invalidForm(`The multipart/form-data body is malformed or cut short: ${error.message}.`)));
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      if (problem) {
        files.discard(id);
        reject(problem);
        return;
      }
      resolve({ fields, file });
    });
    // The client went away (or the connection broke) before the whole body arrived.
    req.on('close', () => {
      if (!req.complete) fail(invalidForm('The multipart/form-data body was cut short.'));
    });
    req.pipe(parser);
  });
}

export const UPLOAD_FORM = {
  fields: UploadFieldsSchema,
  file: 'The file: text or Markdown (TXT), CSV, HTML (URL), PDF, or WebVTT/SRT captions (VIDEO).',
} satisfies { fields: v.GenericSchema; file: string };
